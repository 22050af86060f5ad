package vector_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func ym(m int32) arrow.MonthInterval { return arrow.MonthInterval(m) }

// The year-month interval kernels over columns and constants, with
// injected NULLs, on a checked allocator.
func TestYearMonthIntervalKernels(t *testing.T) {
	col := vector.Col
	two := schemaOf("a", vector.YearMonthInterval, "b", vector.YearMonthInterval)
	rows := []vt.Row{{ym(14), ym(-3)}, {ym(-1), ym(1)}, {ym(2147483647), ym(0)}}
	byInt := schemaOf("a", vector.YearMonthInterval, "k", vector.Int32)
	krows := []vt.Row{{ym(14), int32(2)}, {ym(5), int32(-2)}, {ym(-5), int32(3)}}
	dates := schemaOf("d", vector.Date, "m", vector.YearMonthInterval)
	drows := []vt.Row{{dateOf("2020-01-31"), ym(1)}, {dateOf("2019-03-31"), ym(-13)}, {dateOf("2024-02-29"), ym(12)}}
	ts := schemaOf("t", vector.Timestamp, "m", vector.YearMonthInterval)
	at := func(s string) arrow.Timestamp {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return arrow.Timestamp(v.UnixMicro())
	}
	trows := []vt.Row{{at("2020-01-31 10:00:00"), ym(1)}, {at("2019-03-31 23:59:59"), ym(-1)}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "add", Schema: two, Rows: rows[:2], Expr: vector.YMAdd(col("a"), col("b"), 1), Want: []any{ym(11), ym(0)}, WantType: vector.YearMonthInterval, NullIntolerant: true},
		vt.ExprCase{Name: "sub", Schema: two, Rows: rows[:2], Expr: vector.YMAdd(col("a"), col("b"), -1), Want: []any{ym(17), ym(-2)}, NullIntolerant: true},
		vt.ExprCase{Name: "add-overflow", Schema: two, Rows: rows, Expr: vector.YMAdd(col("a"), vector.TypedLit(vector.YearMonthInterval, ym(1)), 1), WantErr: "ARITHMETIC_OVERFLOW"},
		vt.ExprCase{Name: "negate", Schema: schemaOf("a", vector.YearMonthInterval), Rows: column(ym(14), ym(-1)), Expr: vector.YMNegate(col("a")), Want: []any{ym(-14), ym(1)}, NullIntolerant: true},
		vt.ExprCase{Name: "negate-overflow", Schema: schemaOf("a", vector.YearMonthInterval), Rows: column(ym(-2147483648)), Expr: vector.YMNegate(col("a")), WantErr: "overflow"},
		vt.ExprCase{Name: "mul-int", Schema: byInt, Rows: krows, Expr: vector.YMMultiply(col("a"), col("k"), false), Want: []any{ym(28), ym(-10), ym(-15)}, NullIntolerant: true},
		vt.ExprCase{Name: "div-int-half-up", Schema: byInt, Rows: krows, Expr: vector.YMMultiply(col("a"), col("k"), true), Want: []any{ym(7), ym(-3), ym(-2)}, NullIntolerant: true},
		vt.ExprCase{Name: "div-zero", Schema: byInt, Rows: krows, Expr: vector.YMMultiply(col("a"), vector.Lit(int32(0)), true), WantErr: "DIVIDE_BY_ZERO"},
		vt.ExprCase{Name: "mul-double", Schema: byInt, Rows: krows, Expr: vector.YMMultiply(col("a"), vector.Lit(0.5), false), Want: []any{ym(7), ym(3), ym(-3)}},
		vt.ExprCase{Name: "mul-decimal-exact", Schema: byInt, Rows: krows, Expr: vector.YMMultiply(col("a"), vector.TypedLit(vector.Decimal(2, 1), "0.3"), false), Want: []any{ym(4), ym(2), ym(-2)}},
		vt.ExprCase{Name: "date-add", Schema: dates, Rows: drows, Expr: vector.DateAddYM(col("d"), col("m"), 1), Want: []any{dateOf("2020-02-29"), dateOf("2018-02-28"), dateOf("2025-02-28")}, WantType: vector.Date, NullIntolerant: true},
		vt.ExprCase{Name: "date-sub", Schema: dates, Rows: drows, Expr: vector.DateAddYM(col("d"), col("m"), -1), Want: []any{dateOf("2019-12-31"), dateOf("2020-04-30"), dateOf("2023-02-28")}, NullIntolerant: true},
		vt.ExprCase{Name: "timestamp-add", Schema: ts, Rows: trows, Expr: vector.TimestampAddYM(col("t"), col("m"), 1), Want: []any{at("2020-02-29 10:00:00"), at("2019-02-28 23:59:59")}, WantType: vector.Timestamp, NullIntolerant: true},
		vt.ExprCase{Name: "extract-year", Schema: schemaOf("a", vector.YearMonthInterval), Rows: column(ym(-17), ym(26)), Expr: vector.YMPart(col("a"), true), Want: []any{int32(-1), int32(2)}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "extract-month", Schema: schemaOf("a", vector.YearMonthInterval), Rows: column(ym(-17), ym(26)), Expr: vector.YMPart(col("a"), false), Want: []any{int32(-5), int32(2)}, NullIntolerant: true},
		vt.ExprCase{Name: "to-string", Schema: schemaOf("a", vector.YearMonthInterval), Rows: column(ym(-11), ym(26)), Expr: vector.YMToString(col("a"), vector.Lit(int32(vector.YMYearToMonth))), Want: []any{"INTERVAL '-0-11' YEAR TO MONTH", "INTERVAL '2-2' YEAR TO MONTH"}, NullIntolerant: true},
		vt.ExprCase{Name: "make_ym_interval", Schema: schemaOf("y", vector.Int32, "m", vector.Int32), Rows: []vt.Row{{int32(1), int32(2)}, {int32(-1), int32(-13)}}, Expr: fnCall(t, "make_ym_interval", col("y"), col("m")), Want: []any{ym(14), ym(-25)}, WantType: vector.YearMonthInterval, NullIntolerant: true},
		vt.ExprCase{Name: "make_ym_interval-overflow", Schema: schemaOf("y", vector.Int32), Rows: column(int32(178956971)), Expr: fnCall(t, "make_ym_interval", col("y")), WantErr: "overflow"},
		vt.ExprCase{Name: "make_dt_interval", Schema: schemaOf("d", vector.Int32), Rows: column(int32(1), int32(-2)), Expr: fnCall(t, "make_dt_interval", col("d"), vector.Lit(int32(1)), vector.Lit(int32(0)), vector.Lit(1.5)), Want: []any{arrow.Duration(90001500000), arrow.Duration(-169198500000)}, NullIntolerant: true},
	)
}

// date + months against a model built on the calendar of package time:
// the same day in the target month, clamped to its last day.
func TestDateAddYMMatchesCalendar(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const n = 500
	rows := make([]vt.Row, n)
	want := make([]any, n)
	for i := range rows {
		d := time.Date(1600+r.Intn(800), time.Month(1+r.Intn(12)), 1+r.Intn(31), 0, 0, 0, 0, time.UTC)
		m := int32(r.Intn(4001) - 2000)
		rows[i] = vt.Row{arrow.Date32(d.Unix() / 86400), ym(m)}
		y, mo, day := d.Date()
		first := time.Date(y, mo+time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		last := first.AddDate(0, 1, -1).Day()
		want[i] = arrow.Date32(time.Date(first.Year(), first.Month(), min(day, last), 0, 0, 0, 0, time.UTC).Unix() / 86400)
	}
	vt.RunExpr(t, vt.ExprCase{Name: "model", Schema: schemaOf("d", vector.Date, "m", vector.YearMonthInterval), Rows: rows,
		Expr: vector.DateAddYM(vector.Col("d"), vector.Col("m"), 1), Want: want})
}
