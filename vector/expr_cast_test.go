package vector_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // region zones in tests do not depend on the machine

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// schemaOf builds a schema from name, type pairs.
func schemaOf(kv ...any) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		fields = append(fields, arrow.Field{Name: kv[i].(string), Type: kv[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

var dictString arrow.DataType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// tsMicros parses "2006-01-02 15:04:05.999999" in UTC.
func tsMicros(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func dateDays(s string) int64 {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t.Unix() / 86400
}

// column returns the rows of one column.
func column(vals ...any) []vt.Row {
	rows := make([]vt.Row, len(vals))
	for i, v := range vals {
		rows[i] = vt.Row{v}
	}
	return rows
}

func TestCastNumeric(t *testing.T) {
	i64 := schemaOf("x", vector.Int64)
	i32 := schemaOf("x", vector.Int32)
	f64 := schemaOf("x", vector.Float64)
	b := schemaOf("x", vector.Boolean)
	vt.RunExpr(t,
		vt.ExprCase{Name: "bigint-int", Schema: i64, Rows: column(1, -2, int64(math.MaxInt32), int64(math.MinInt32), 0),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), Want: []any{1, -2, math.MaxInt32, math.MinInt32, 0}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "bigint-int-overflow", Schema: i64, Rows: column(1, nil, int64(3_000_000_000)),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), WantErr: "[CAST_OVERFLOW] The value 3000000000L of the type \"BIGINT\" cannot be cast to \"INT\" due to an overflow"},
		vt.ExprCase{Name: "bigint-int-overflow-value", Schema: i64, Rows: column(int64(3_000_000_000)),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), WantErr: "in CAST(x AS INT) at row 0 (x=3000000000)"},
		vt.ExprCase{Name: "int-bigint", Schema: i32, Rows: column(1, -2, math.MinInt32),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{1, -2, math.MinInt32}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "int-double", Schema: i32, Rows: column(1, -2),
			Expr: vector.Cast(vector.Col("x"), vector.Float64), Want: []any{1.0, -2.0}, NullIntolerant: true},
		vt.ExprCase{Name: "double-int-truncates", Schema: f64, Rows: column(1.9, -1.9, 2147483647.5, -2147483648.9),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), Want: []any{1, -1, math.MaxInt32, math.MinInt32}, NullIntolerant: true},
		vt.ExprCase{Name: "double-bigint", Schema: f64, Rows: column(1e18, -9.223372036854775808e18),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{int64(1e18), int64(math.MinInt64)}, NullIntolerant: true},
		// Spark compares floor(x) <= Long.MaxValue as doubles: 2^63
		// itself passes and saturates (bigint(double('9223372036854775807'))
		// in postgreSQL/float8), the next double above it overflows.
		vt.ExprCase{Name: "double-bigint-two-to-63", Schema: f64, Rows: column(1.0, nil, 9.223372036854775807e18, -9.223372036854775808e18),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{int64(1), nil, int64(math.MaxInt64), int64(math.MinInt64)}, NullIntolerant: true},
		vt.ExprCase{Name: "float-bigint-two-to-63", Schema: schemaOf("x", vector.Float32), Rows: column(float32(9.223372e18), float32(-9.223372e18)),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{int64(math.MaxInt64), int64(math.MinInt64)}, NullIntolerant: true},
		vt.ExprCase{Name: "double-bigint-above-two-to-63", Schema: f64, Rows: column(9.223372036854775807e18, math.Nextafter(9.223372036854775807e18, math.Inf(1))),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), WantErr: "[CAST_OVERFLOW] The value 9.223372036854778E18D"},
		vt.ExprCase{Name: "float-int-two-to-31", Schema: schemaOf("x", vector.Float32), Rows: column(float32(2147483647)),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), WantErr: "[CAST_OVERFLOW]"},
		vt.ExprCase{Name: "double-int-nan", Schema: f64, Rows: column(1.0, math.NaN()),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), WantErr: "(x=NaN)"},
		vt.ExprCase{Name: "double-bigint-inf", Schema: f64, Rows: column(math.Inf(1)),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), WantErr: "[CAST_OVERFLOW] The value Infinity of the type \"DOUBLE\""},
		vt.ExprCase{Name: "double-bigint-big", Schema: f64, Rows: column(9.3e18),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), WantErr: "[CAST_OVERFLOW]"},
		vt.ExprCase{Name: "bool-int", Schema: b, Rows: column(true, false),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), Want: []any{1, 0}, NullIntolerant: true},
		vt.ExprCase{Name: "bool-double", Schema: b, Rows: column(true, false),
			Expr: vector.Cast(vector.Col("x"), vector.Float64), Want: []any{1.0, 0.0}, NullIntolerant: true},
		vt.ExprCase{Name: "int-bool", Schema: i64, Rows: column(0, 5, -1),
			Expr: vector.Cast(vector.Col("x"), vector.Boolean), Want: []any{false, true, true}, NullIntolerant: true},
		vt.ExprCase{Name: "double-bool", Schema: f64, Rows: column(0.0, math.NaN(), 0.5),
			Expr: vector.Cast(vector.Col("x"), vector.Boolean), Want: []any{false, true, true}, NullIntolerant: true},
		vt.ExprCase{Name: "identity", Schema: i64, Rows: column(7),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{7}, NullIntolerant: true},
		vt.ExprCase{Name: "constant-folds", Schema: i64, Rows: column(1, 2),
			Expr: vector.Cast(vector.Lit("42"), vector.Int64), Want: []any{42, 42}},
		vt.ExprCase{Name: "constant-overflow-is-bind-error", Schema: i64, Rows: column(1),
			Expr: vector.Cast(vector.Lit(int64(1)<<40), vector.Int32), WantErr: "cannot bind CAST(1099511627776L AS INT): [CAST_OVERFLOW]"},
		vt.ExprCase{Name: "null-literal", Schema: i64, Rows: column(1),
			Expr: vector.Cast(vector.Lit(nil), vector.Int32), Want: []any{nil}, WantType: vector.Int32},
	)
}

func TestCastFromString(t *testing.T) {
	s := schemaOf("s", vector.String)
	d := schemaOf("s", dictString)
	ints := column(" 42 ", "-7", "+3", "1.9", "-1.9", ".5", "1.", "abc", "", "1e3", "2147483648", "-2147483648", "1 2", "\t12\n", "1.2.3", "-")
	vt.RunExpr(t,
		vt.ExprCase{Name: "int", Schema: s, Rows: ints, Expr: legacyCast(vector.Col("s"), vector.Int32),
			Want: []any{42, -7, 3, 1, -1, 0, 1, nil, nil, nil, nil, math.MinInt32, nil, 12, nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "int-dictionary", Schema: d, Rows: ints, Expr: legacyCast(vector.Col("s"), vector.Int32),
			Want: []any{42, -7, 3, 1, -1, 0, 1, nil, nil, nil, nil, math.MinInt32, nil, 12, nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "bigint", Schema: s, Rows: column("9223372036854775807", "-9223372036854775808", "9223372036854775808", "2147483648"),
			Expr: legacyCast(vector.Col("s"), vector.Int64), Want: []any{int64(math.MaxInt64), int64(math.MinInt64), nil, 2147483648}, NullIntolerant: true},
		vt.ExprCase{Name: "double", Schema: s, Rows: column("1.5", " -2e3 ", "inf", "-Infinity", "NaN", "nan", "1.5d", "abc", "0x1p3", "1e400", "1_0", ""),
			Expr: legacyCast(vector.Col("s"), vector.Float64),
			Want: []any{1.5, -2000.0, math.Inf(1), math.Inf(-1), math.NaN(), math.NaN(), 1.5, nil, 8.0, math.Inf(1), nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "boolean", Schema: s, Rows: column("true", "T", " yes ", "y", "1", "false", "F", "no", "N", "0", "maybe", "2"),
			Expr: legacyCast(vector.Col("s"), vector.Boolean),
			Want: []any{true, true, true, true, true, false, false, false, false, false, nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "binary", Schema: s, Rows: column("ab", ""),
			Expr: legacyCast(vector.Col("s"), vector.Binary), Want: []any{"ab", ""}, WantType: vector.Binary, NullIntolerant: true},
		vt.ExprCase{Name: "decimal", Schema: s, Rows: column("1.235", " -1.5 ", "1e2", "abc", "1000", "0.0049"),
			Expr: legacyCast(vector.Col("s"), vector.Decimal(5, 2)), Want: []any{"1.24", "-1.50", "100.00", nil, nil, "0.00"}, NullIntolerant: true},
	)
}

func TestCastStringToDatetime(t *testing.T) {
	s := schemaOf("s", vector.String)
	vt.RunExpr(t,
		vt.ExprCase{Name: "timestamp", Schema: s,
			Rows: column("2026-01-01", "2026-01-01 10:00:00", "2026-01-01T10:00:00.123Z", "2026-01-01 10:00:00+01:00",
				" 2026-1-2 3:4:5.000006 ", "2026-01-01T10:00:00.1234567", "2026", "2026-03", "2026-01-01 10:00",
				"2026-01-01 10:00:00 UTC", "2026-01-01 10:00:00-08:00", "2026-07-01 12:00:00 Europe/Paris",
				"2026-01-01 10:00:00 PST", "2026-01-01T10:00:00GMT+2", "2026-02-30", "2026-01-01 25:00:00",
				"abc", "", "2026-01-01 10:00:00 Nowhere/Land", "2026-01-01T"),
			Expr: legacyCast(vector.Col("s"), vector.Timestamp),
			Want: []any{tsMicros("2026-01-01 00:00:00"), tsMicros("2026-01-01 10:00:00"), tsMicros("2026-01-01 10:00:00.123"),
				tsMicros("2026-01-01 09:00:00"), tsMicros("2026-01-02 03:04:05.000006"), tsMicros("2026-01-01 10:00:00.123456"),
				tsMicros("2026-01-01 00:00:00"), tsMicros("2026-03-01 00:00:00"), tsMicros("2026-01-01 10:00:00"),
				tsMicros("2026-01-01 10:00:00"), tsMicros("2026-01-01 18:00:00"), tsMicros("2026-07-01 10:00:00"),
				tsMicros("2026-01-01 18:00:00"), tsMicros("2026-01-01 08:00:00"), nil, nil, nil, nil, nil, nil},
			WantType: vector.Timestamp, NullIntolerant: true},
		vt.ExprCase{Name: "date", Schema: s,
			Rows: column("2026-01-01", " 2026-1-2 ", "2026-01-01 10:00:00", "2026-01-01Tanything", "2026", "2026-02", "2024-02-29",
				"2026-02-29", "26-01-01", "abc", "-0001-01-01"),
			Expr: legacyCast(vector.Col("s"), vector.Date),
			Want: []any{dateDays("2026-01-01"), dateDays("2026-01-02"), dateDays("2026-01-01"), dateDays("2026-01-01"),
				dateDays("2026-01-01"), dateDays("2026-02-01"), dateDays("2024-02-29"), nil, nil, nil, int64(-719893)},
			WantType: vector.Date, NullIntolerant: true},
	)
}

func TestCastToString(t *testing.T) {
	cast := func(name string, dt arrow.DataType, vals []any, want ...any) vt.ExprCase {
		return vt.ExprCase{Name: name, Schema: schemaOf("x", dt), Rows: column(vals...),
			Expr: vector.Cast(vector.Col("x"), vector.String), Want: want, WantType: vector.String, NullIntolerant: true}
	}
	vt.RunExpr(t,
		cast("bigint", vector.Int64, []any{0, -12, int64(math.MinInt64)}, "0", "-12", "-9223372036854775808"),
		cast("int", vector.Int32, []any{7, -1}, "7", "-1"),
		cast("double", vector.Float64, []any{1.0, 1e20, 1.5e-5, 0.001, 1234567.0, 12345678.0, math.Copysign(0, -1), math.NaN(), math.Inf(-1), 0.1, 123.456},
			"1.0", "1.0E20", "1.5E-5", "0.001", "1234567.0", "1.2345678E7", "-0.0", "NaN", "-Infinity", "0.1", "123.456"),
		cast("boolean", vector.Boolean, []any{true, false}, "true", "false"),
		cast("timestamp", vector.Timestamp, []any{tsMicros("2026-01-01 00:00:00"), tsMicros("2026-01-01 10:20:30.120000"), tsMicros("1969-12-31 23:59:59.999999")},
			"2026-01-01 00:00:00", "2026-01-01 10:20:30.12", "1969-12-31 23:59:59.999999"),
		cast("date", vector.Date, []any{arrow.Date32(dateDays("2026-01-01")), arrow.Date32(-1)}, "2026-01-01", "1969-12-31"),
		cast("decimal", vector.Decimal(6, 2), []any{"1.50", "-0.05", "1234.00"}, "1.50", "-0.05", "1234.00"),
		cast("binary", vector.Binary, []any{[]byte("hi")}, "hi"),
	)
}

func TestCastDatetime(t *testing.T) {
	ts := schemaOf("x", vector.Timestamp)
	vt.RunExpr(t,
		vt.ExprCase{Name: "timestamp-date", Schema: ts, Rows: column(tsMicros("2026-01-01 23:59:59"), tsMicros("1969-12-31 10:00:00")),
			Expr: vector.Cast(vector.Col("x"), vector.Date), Want: []any{dateDays("2026-01-01"), -1}, NullIntolerant: true},
		vt.ExprCase{Name: "date-timestamp", Schema: schemaOf("x", vector.Date), Rows: column(arrow.Date32(dateDays("2026-01-01"))),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), Want: []any{tsMicros("2026-01-01 00:00:00")}, NullIntolerant: true},
		vt.ExprCase{Name: "timestamp-bigint-floor", Schema: ts, Rows: column(1_500_000, -1),
			Expr: vector.Cast(vector.Col("x"), vector.Int64), Want: []any{1, -1}, NullIntolerant: true},
		vt.ExprCase{Name: "timestamp-double", Schema: ts, Rows: column(1_500_000),
			Expr: vector.Cast(vector.Col("x"), vector.Float64), Want: []any{1.5}, NullIntolerant: true},
		vt.ExprCase{Name: "bigint-timestamp", Schema: schemaOf("x", vector.Int64), Rows: column(1, -2),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), Want: []any{1_000_000, -2_000_000}, NullIntolerant: true},
		vt.ExprCase{Name: "bigint-timestamp-overflow", Schema: schemaOf("x", vector.Int64), Rows: column(int64(math.MaxInt64)),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), WantErr: "[CAST_OVERFLOW] The value 9223372036854775807L of the type \"BIGINT\" cannot be cast to \"TIMESTAMP\""},
		vt.ExprCase{Name: "double-timestamp", Schema: schemaOf("x", vector.Float64), Rows: column(1.5, -0.25),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), Want: []any{1_500_000, -250_000}, NullIntolerant: true},
		vt.ExprCase{Name: "double-timestamp-nan", Schema: schemaOf("x", vector.Float64), Rows: column(math.NaN()),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), WantErr: "[CAST_INVALID_INPUT] The value NaN of the type \"DOUBLE\""},
	)
}

func TestCastDecimal(t *testing.T) {
	d := schemaOf("x", vector.Decimal(10, 3))
	vt.RunExpr(t,
		vt.ExprCase{Name: "rescale-half-up", Schema: d, Rows: column("1.235", "-1.235", "1.234"),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(5, 2)), Want: []any{"1.24", "-1.24", "1.23"}, NullIntolerant: true},
		vt.ExprCase{Name: "rescale-overflow", Schema: d, Rows: column("1234.5"),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(4, 2)), WantErr: "[NUMERIC_VALUE_OUT_OF_RANGE] 1234.500 cannot be represented as Decimal(4, 2). If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. in CAST(x AS DECIMAL(4,2)) at row 0 (x=1234.500)"},
		vt.ExprCase{Name: "to-int-truncates", Schema: d, Rows: column("1.9", "-1.9"),
			Expr: vector.Cast(vector.Col("x"), vector.Int32), Want: []any{1, -1}, NullIntolerant: true},
		vt.ExprCase{Name: "to-double", Schema: d, Rows: column("0.1", "-2.5"),
			Expr: vector.Cast(vector.Col("x"), vector.Float64), Want: []any{0.1, -2.5}, NullIntolerant: true},
		vt.ExprCase{Name: "to-bool", Schema: d, Rows: column("0", "0.001"),
			Expr: vector.Cast(vector.Col("x"), vector.Boolean), Want: []any{false, true}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp", Schema: d, Rows: column("1.5"),
			Expr: vector.Cast(vector.Col("x"), vector.Timestamp), Want: []any{1_500_000}, NullIntolerant: true},
		vt.ExprCase{Name: "from-bigint", Schema: schemaOf("x", vector.Int64), Rows: column(12, -3),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(4, 1)), Want: []any{"12.0", "-3.0"}, NullIntolerant: true},
		vt.ExprCase{Name: "from-bigint-overflow", Schema: schemaOf("x", vector.Int64), Rows: column(1000),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(4, 1)), WantErr: "(x=1000)"},
		vt.ExprCase{Name: "from-double", Schema: schemaOf("x", vector.Float64), Rows: column(0.1, 1.005, -2.5),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(5, 2)), Want: []any{"0.10", "1.01", "-2.50"}, NullIntolerant: true},
		// NaN and the infinities have no decimal: NULL also under ANSI,
		// as Spark's Cast gives (postgreSQL/numeric: decimal(double('NaN'))).
		vt.ExprCase{Name: "from-double-nan", Schema: schemaOf("x", vector.Float64), Rows: column(math.NaN(), math.Inf(1), math.Inf(-1), 1.5),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(5, 2)), Want: []any{nil, nil, nil, "1.50"}},
		vt.ExprCase{Name: "from-bool", Schema: schemaOf("x", vector.Boolean), Rows: column(true, false),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(3, 2)), Want: []any{"1.00", "0.00"}, NullIntolerant: true},
		vt.ExprCase{Name: "from-timestamp", Schema: schemaOf("x", vector.Timestamp), Rows: column(1_500_000),
			Expr: vector.Cast(vector.Col("x"), vector.Decimal(10, 1)), Want: []any{"1.5"}, NullIntolerant: true},
		vt.ExprCase{Name: "wide", Schema: schemaOf("x", vector.Decimal(38, 0)), Rows: column("12345678901234567890123456789012345678"),
			Expr: vector.Cast(vector.Col("x"), vector.String), Want: []any{"12345678901234567890123456789012345678"}},
	)
}

func TestCastBindErrors(t *testing.T) {
	s := schemaOf("d", vector.Date, "b", vector.Boolean, "s", vector.String)
	rows := []vt.Row{{nil, nil, nil}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "date-int", Schema: s, Rows: rows, Expr: vector.Cast(vector.Col("d"), vector.Int32),
			WantErr: "cannot bind CAST(d AS INT): cannot cast date to int: type mismatch (available columns: d, b, s)"},
		vt.ExprCase{Name: "bool-timestamp", Schema: s, Rows: rows, Expr: vector.Cast(vector.Col("b"), vector.Timestamp),
			WantErr: "cannot cast boolean to timestamp"},
		vt.ExprCase{Name: "to-struct", Schema: s, Rows: rows, Expr: vector.Cast(vector.Col("s"), vector.WindowType),
			WantErr: "cannot cast string to struct<start:timestamp,end:timestamp>"},
		vt.ExprCase{Name: "unknown-column", Schema: s, Rows: rows, Expr: vector.Cast(vector.Col("zz"), vector.Int32),
			WantErr: "unknown column zz"},
	)
	mem := memory.NewGoAllocator()
	_, err := vector.Cast(vector.Col("d"), vector.Int64).Bind(s, mem)
	if !errors.Is(err, vector.ErrType) {
		t.Errorf("want ErrType, got %v", err)
	}
	if got := vector.Cast(vector.Col("x"), vector.Decimal(10, 2)).String(); got != "CAST(x AS DECIMAL(10,2))" {
		t.Errorf("String = %q", got)
	}
}

// castOneString casts a one-row string column to dt in every mode: legacy
// and try_cast never fail; ANSI fails exactly where try_cast gives NULL,
// with CAST_INVALID_INPUT or an overflow.
func castOneString(t testing.TB, mem memory.Allocator, s string, dt arrow.DataType) {
	schema := schemaOf("s", vector.String)
	b := array.NewStringBuilder(mem)
	b.Append(s)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, 1)
	col.Release()
	defer rec.Release()
	run := func(mode vector.EvalMode) (null bool, err error) {
		ev, err := (&vector.CastExpr{X: vector.Col("s"), To: dt, Mode: mode}).Bind(schema, mem)
		if err != nil {
			t.Fatalf("bind: %v", err)
		}
		out, err := ev.Eval(context.Background(), rec)
		if err != nil {
			return false, err
		}
		defer out.Release()
		return out.IsNull(0), nil
	}
	if _, err := run(vector.ModeLegacy); err != nil {
		if errors.Is(err, vector.ErrTimeOfDayOnly) {
			// Refused in every mode (see cast_time_only.go).
			for _, m := range []vector.EvalMode{vector.ModeTry, vector.ModeANSI} {
				if _, err := run(m); err == nil {
					t.Fatalf("cast %q to %s in mode %v: answered, but legacy refused a time of day only", s, vector.TypeName(dt), m)
				}
			}
			return
		}
		t.Fatalf("legacy cast %q to %s: %v", s, vector.TypeName(dt), err)
	}
	tryNull, err := run(vector.ModeTry)
	if err != nil {
		t.Fatalf("try_cast %q to %s: %v", s, vector.TypeName(dt), err)
	}
	_, err = run(vector.ModeANSI)
	if (err != nil) != tryNull {
		t.Fatalf("cast %q to %s: ANSI error %v, try_cast NULL %v", s, vector.TypeName(dt), err, tryNull)
	}
	if err != nil && !errors.Is(err, vector.ErrInvalidInput) && !errors.Is(err, vector.ErrOverflow) {
		t.Fatalf("cast %q to %s: unexpected error %v", s, vector.TypeName(dt), err)
	}
}

// FuzzCastString feeds arbitrary strings to every string parser behind
// CAST (numbers, booleans, decimals, timestamps, dates) in the three modes
// (see castOneString); nothing may panic or leak.
func FuzzCastString(f *testing.F) {
	for _, s := range []string{"1", "-9223372036854775808", "1.5e10", "inf", "2026-01-01T10:00:00.123Z",
		"2026-01-01 10:00:00 Europe/Paris", "+2026-1-1 1:2:3.4+01:00", "  yes ", "1e99999", "-.", "T10:00", "2026-01-01 10:00:00 UTC+1:5", "300", "1.5"} {
		f.Add(s)
	}
	types := []arrow.DataType{vector.Int8, vector.Int16, vector.Int32, vector.Int64, vector.Float64, vector.Boolean, vector.Timestamp, vector.Date, vector.Decimal(10, 2), vector.Decimal(38, 0)}
	f.Fuzz(func(t *testing.T, s string) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		for _, dt := range types {
			castOneString(t, mem, s, dt)
		}
	})
}

func TestCastStringSpecials(t *testing.T) {
	// Strings longer than any batch buffer guess, and a sliced dictionary.
	long := strings.Repeat("9", 100)
	vt.RunExpr(t, vt.ExprCase{Name: "long", Schema: schemaOf("s", vector.String), Rows: column(long),
		Expr: legacyCast(vector.Col("s"), vector.Int64), Want: []any{nil}})
}

// legacyCast is CAST with spark.sql.ansi.enabled=false.
func legacyCast(x vector.Expr, to arrow.DataType) vector.Expr {
	return &vector.CastExpr{X: x, To: to, Mode: vector.ModeLegacy}
}

func benchRecord(b *testing.B, dt arrow.DataType, rows int, value func(i int) any) arrow.Record {
	mem := memory.NewGoAllocator()
	schema := schemaOf("x", dt)
	bld := array.NewBuilder(mem, dt)
	for i := 0; i < rows; i++ {
		if err := vector.AppendValue(bld, value(i)); err != nil {
			b.Fatal(err)
		}
	}
	col := bld.NewArray()
	bld.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	col.Release()
	return rec
}

func benchCast(b *testing.B, from, to arrow.DataType, value func(i int) any) {
	const rows = 64 * 1024
	rec := benchRecord(b, from, rows, value)
	defer rec.Release()
	ev, err := vector.Cast(vector.Col("x"), to).Bind(rec.Schema(), memory.NewGoAllocator())
	if err != nil {
		b.Fatal(err)
	}
	runEvalBench(b, ev, rec, rows)
}

// BenchmarkCastNumeric covers the whole-column numeric casts: a widening
// (no check), a narrowing (range flagged in the same pass) and double to
// bigint (truncation with a range check).
func BenchmarkCastNumeric(b *testing.B) {
	b.Run("int-bigint", func(b *testing.B) {
		benchCast(b, vector.Int32, vector.Int64, func(i int) any { return int32(i) })
	})
	b.Run("bigint-int", func(b *testing.B) {
		benchCast(b, vector.Int64, vector.Int32, func(i int) any { return int64(i) })
	})
	b.Run("bigint-double", func(b *testing.B) {
		benchCast(b, vector.Int64, vector.Float64, func(i int) any { return int64(i) })
	})
	b.Run("double-bigint", func(b *testing.B) {
		benchCast(b, vector.Float64, vector.Int64, func(i int) any { return float64(i) * 1.5 })
	})
}

// BenchmarkCastStringToInt is the string → int/bigint parser, with a
// strconv.ParseInt loop over the same buffers as the baseline.
func BenchmarkCastStringToInt(b *testing.B) {
	value := func(i int) any { return strconv.Itoa(i * 7919) }
	b.Run("int", func(b *testing.B) { benchCast(b, vector.String, vector.Int32, value) })
	b.Run("bigint", func(b *testing.B) { benchCast(b, vector.String, vector.Int64, value) })
	b.Run("baseline-strconv", func(b *testing.B) {
		const rows = 64 * 1024
		rec := benchRecord(b, vector.String, rows, value)
		defer rec.Release()
		col := rec.Column(0).(*array.String)
		out := make([]int64, rows)
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			for i := 0; i < rows; i++ {
				v, _ := strconv.ParseInt(col.Value(i), 10, 64)
				out[i] = v
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("timestamp", func(b *testing.B) {
		benchCast(b, vector.String, vector.Timestamp, func(i int) any { return "2026-01-01 10:00:00." + strconv.Itoa(i%1000) })
	})
}

// TestCastEmptyBatch: casts from boolean read its value buffer, which an
// empty array may lack, and casts of a dictionary gather the cast of an
// empty dictionary (both panicked; found by FuzzExprEval).
func TestCastEmptyBatch(t *testing.T) {
	s := exprSchema("p", vector.Boolean, "e", dictStringType)
	checkEmptyBatch(t, s,
		vector.Cast(col("p"), vector.Int32), vector.Cast(col("p"), vector.Int64), vector.Cast(col("p"), vector.Float64),
		vector.Cast(col("p"), vector.String), vector.Cast(col("p"), vector.Decimal(5, 1)),
		vector.Cast(col("e"), vector.Decimal(8, 3)), vector.Cast(col("e"), vector.Int64), vector.Cast(col("e"), vector.Boolean),
		vector.Cast(col("e"), vector.Timestamp), vector.Cast(col("e"), vector.Date), vector.Cast(col("e"), vector.Binary))
}
