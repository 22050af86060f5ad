package vector_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/decimal128"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func dec(s string, p, sc int32) decimal128.Num {
	n, err := decimal128.FromString(s, p, sc)
	if err != nil {
		panic(err)
	}
	return n
}

func TestAbs(t *testing.T) {
	vt.RunExpr(t,
		vt.ExprCase{Name: "int", Schema: schemaOf("x", vector.Int32), Rows: column(-3, 0, 5, -2147483647),
			Expr: vector.Abs(vector.Col("x")), Want: []any{3, 0, 5, 2147483647}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "bigint", Schema: schemaOf("x", vector.Int64), Rows: column(int64(-9), int64(math.MaxInt64)),
			Expr: vector.Abs(vector.Col("x")), Want: []any{9, math.MaxInt64}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "double", Schema: schemaOf("x", vector.Float64), Rows: column(-2.5, 0.0, math.Inf(-1)),
			Expr: vector.Abs(vector.Col("x")), Want: []any{2.5, 0.0, math.Inf(1)}, WantType: vector.Float64, NullIntolerant: true},
		vt.ExprCase{Name: "decimal", Schema: schemaOf("x", vector.Decimal(5, 2)), Rows: column(dec("-1.25", 5, 2), dec("3.00", 5, 2)),
			Expr: vector.Abs(vector.Col("x")), Want: []any{"1.25", "3.00"}, WantType: vector.Decimal(5, 2), NullIntolerant: true},
		vt.ExprCase{Name: "string-as-double", Schema: schemaOf("s", vector.String), Rows: column("-1.5", "x"),
			Expr: vector.Abs(vector.Col("s")), Want: []any{1.5, nil}, WantType: vector.Float64},
		vt.ExprCase{Name: "constant", Schema: schemaOf("x", vector.Int32), Rows: column(1),
			Expr: vector.Abs(vector.Lit(-7)), Want: []any{7}},
		vt.ExprCase{Name: "overflow", Schema: schemaOf("x", vector.Int32), Rows: column(1, math.MinInt32),
			Expr: vector.Abs(vector.Col("x")), WantErr: "arithmetic overflow in abs(x) at row"},
		vt.ExprCase{Name: "bad-type", Schema: schemaOf("b", vector.Boolean), Rows: column(true),
			Expr: vector.Abs(vector.Col("b")), WantErr: "abs requires a numeric argument, not boolean"},
	)
}

func TestRound(t *testing.T) {
	vt.RunExpr(t,
		vt.ExprCase{Name: "double-half-up", Schema: schemaOf("x", vector.Float64), Rows: column(2.5, -2.5, 0.5, 1.4999, -0.5, 3.0),
			Expr: vector.Round(vector.Col("x"), nil), Want: []any{3.0, -3.0, 1.0, 1.0, -1.0, 3.0}, WantType: vector.Float64, NullIntolerant: true},
		// 0.285 and 1.005 are stored just below the half; Spark rounds the
		// decimal text, so they round up.
		vt.ExprCase{Name: "double-scale", Schema: schemaOf("x", vector.Float64), Rows: column(0.125, 0.285, 1.005, -2.345, 123.456),
			Expr: vector.Round(vector.Col("x"), vector.Lit(2)), Want: []any{0.13, 0.29, 1.01, -2.35, 123.46}, NullIntolerant: true},
		vt.ExprCase{Name: "double-negative-scale", Schema: schemaOf("x", vector.Float64), Rows: column(1250.0, -1249.9, 5.0),
			Expr: vector.Round(vector.Col("x"), vector.Lit(-2)), Want: []any{1300.0, -1200.0, 0.0}, NullIntolerant: true},
		vt.ExprCase{Name: "double-special", Schema: schemaOf("x", vector.Float64), Rows: column(math.Inf(1), 1e300),
			Expr: vector.Round(vector.Col("x"), vector.Lit(3)), Want: []any{math.Inf(1), 1e300}},
		vt.ExprCase{Name: "int", Schema: schemaOf("x", vector.Int32), Rows: column(15, -15, 14, 7),
			Expr: vector.Round(vector.Col("x"), vector.Lit(-1)), Want: []any{20, -20, 10, 10}, WantType: vector.Int32, NullIntolerant: true},
		vt.ExprCase{Name: "int-positive-scale", Schema: schemaOf("x", vector.Int64), Rows: column(int64(15)),
			Expr: vector.Round(vector.Col("x"), vector.Lit(2)), Want: []any{15}, WantType: vector.Int64},
		vt.ExprCase{Name: "bigint-huge-scale", Schema: schemaOf("x", vector.Int64), Rows: column(int64(123), int64(-4e18)),
			Expr: vector.Round(vector.Col("x"), vector.Lit(-19)), Want: []any{0, 0}},
		vt.ExprCase{Name: "decimal", Schema: schemaOf("x", vector.Decimal(5, 3)), Rows: column(dec("2.345", 5, 3), dec("-2.345", 5, 3), dec("99.995", 5, 3)),
			Expr: vector.Round(vector.Col("x"), vector.Lit(2)), Want: []any{"2.35", "-2.35", "100.00"},
			WantType: vector.Decimal(5, 2), NullIntolerant: true},
		vt.ExprCase{Name: "decimal-scale-0", Schema: schemaOf("x", vector.Decimal(2, 1)), Rows: column(dec("2.5", 2, 1), dec("-2.5", 2, 1)),
			Expr: vector.Round(vector.Col("x"), nil), Want: []any{"3", "-3"}, WantType: vector.Decimal(2, 0)},
		vt.ExprCase{Name: "decimal-negative-scale", Schema: schemaOf("x", vector.Decimal(4, 1)), Rows: column(dec("155.0", 4, 1)),
			Expr: vector.Round(vector.Col("x"), vector.Lit(-1)), Want: []any{"160"}, WantType: vector.Decimal(4, 0)},
		vt.ExprCase{Name: "int-overflow", Schema: schemaOf("x", vector.Int32), Rows: column(2147483647),
			Expr: vector.Round(vector.Col("x"), vector.Lit(-1)), WantErr: "arithmetic overflow"},
		vt.ExprCase{Name: "scale-not-constant", Schema: schemaOf("x", vector.Float64, "s", vector.Int32), Rows: []vt.Row{{1.5, 1}},
			Expr: vector.Round(vector.Col("x"), vector.Col("s")), WantErr: "the scale of round must be an integer constant"},
	)
}

func TestFloorCeil(t *testing.T) {
	vt.RunExpr(t,
		vt.ExprCase{Name: "floor-double", Schema: schemaOf("x", vector.Float64), Rows: column(2.5, -2.5, 3.0, math.NaN(), 1e30),
			Expr: vector.Floor(vector.Col("x")), Want: []any{2, -3, 3, 0, math.MaxInt64}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "ceil-double", Schema: schemaOf("x", vector.Float64), Rows: column(2.1, -2.9, -1e30),
			Expr: vector.Ceil(vector.Col("x")), Want: []any{3, -2, math.MinInt64}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "floor-int", Schema: schemaOf("x", vector.Int32), Rows: column(-4, 9),
			Expr: vector.Floor(vector.Col("x")), Want: []any{-4, 9}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "ceil-bigint", Schema: schemaOf("x", vector.Int64), Rows: column(int64(-4)),
			Expr: vector.Ceil(vector.Col("x")), Want: []any{-4}, WantType: vector.Int64},
		vt.ExprCase{Name: "floor-decimal", Schema: schemaOf("x", vector.Decimal(5, 2)), Rows: column(dec("1.50", 5, 2), dec("-1.50", 5, 2), dec("-2.00", 5, 2)),
			Expr: vector.Floor(vector.Col("x")), Want: []any{"1", "-2", "-2"}, WantType: vector.Decimal(4, 0), NullIntolerant: true},
		vt.ExprCase{Name: "ceil-decimal", Schema: schemaOf("x", vector.Decimal(5, 2)), Rows: column(dec("1.01", 5, 2), dec("-1.99", 5, 2)),
			Expr: vector.Ceil(vector.Col("x")), Want: []any{"2", "-1"}, WantType: vector.Decimal(4, 0)},
		vt.ExprCase{Name: "decimal-scale-0", Schema: schemaOf("x", vector.Decimal(5, 0)), Rows: column(dec("7", 5, 0)),
			Expr: vector.Floor(vector.Col("x")), Want: []any{"7"}, WantType: vector.Decimal(5, 0)},
		vt.ExprCase{Name: "bad-type", Schema: schemaOf("d", vector.Date), Rows: column(int64(1)),
			Expr: vector.Ceil(vector.Col("d")), WantErr: "ceil requires a numeric argument, not date"},
	)
}

func TestMathRegistry(t *testing.T) {
	s := schemaOf("x", vector.Float64, "y", vector.Float64)
	for _, c := range []struct {
		name string
		args []vector.Expr
		want []any
	}{
		{"abs", []vector.Expr{vector.Col("x")}, []any{1.5}},
		{"round", []vector.Expr{vector.Col("x")}, []any{-2.0}},
		{"floor", []vector.Expr{vector.Col("x")}, []any{-2}},
		{"ceiling", []vector.Expr{vector.Col("x")}, []any{-1}},
		{"coalesce", []vector.Expr{vector.Col("y"), vector.Col("x")}, []any{-1.5}},
		{"nvl", []vector.Expr{vector.Col("y"), vector.Lit(2.0)}, []any{2.0}},
		{"if", []vector.Expr{vector.Lt(vector.Col("x"), vector.Lit(0.0)), vector.Lit("neg"), vector.Lit("pos")}, []any{"neg"}},
		{"isnull", []vector.Expr{vector.Col("y")}, []any{true}},
		{"isnotnull", []vector.Expr{vector.Col("y")}, []any{false}},
	} {
		e, err := vector.LookupFunction(c.name, c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		vt.RunExpr(t, vt.ExprCase{Name: c.name, Schema: s, Rows: []vt.Row{{-1.5, nil}}, Expr: e, Want: c.want})
	}
}
