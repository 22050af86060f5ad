package vector_test

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestLegacyAndTryCasts: without ANSI casts give Spark 3's values (integers
// keep their low bits, doubles saturate through int, NaN is 0), try_cast
// gives NULL where ANSI raises.
func TestLegacyAndTryCasts(t *testing.T) {
	x := vector.Col("x")
	i64 := schemaOf("x", vector.Int64)
	f64 := schemaOf("x", vector.Float64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "bigint-int-wraps", Schema: i64, Rows: column(int64(3_000_000_000), int64(-1), nil),
			Expr: &vector.CastExpr{X: x, To: vector.Int32, Mode: vector.ModeLegacy}, Want: []any{-1294967296, -1, nil}},
		vt.ExprCase{Name: "int-tinyint-wraps", Schema: i64, Rows: column(int64(300), int64(-129), int64(127)),
			Expr: &vector.CastExpr{X: x, To: vector.Int8, Mode: vector.ModeLegacy}, Want: []any{44, 127, 127}},
		vt.ExprCase{Name: "double-int-saturates", Schema: f64, Rows: column(1e10, -1e10, math.NaN(), 2.9),
			Expr: &vector.CastExpr{X: x, To: vector.Int32, Mode: vector.ModeLegacy}, Want: []any{math.MaxInt32, math.MinInt32, 0, 2}},
		vt.ExprCase{Name: "double-bigint-saturates", Schema: f64, Rows: column(1e30, math.Inf(-1)),
			Expr: &vector.CastExpr{X: x, To: vector.Int64, Mode: vector.ModeLegacy}, Want: []any{int64(math.MaxInt64), int64(math.MinInt64)}},
		vt.ExprCase{Name: "double-smallint-through-int", Schema: f64, Rows: column(1e10, 40000.0),
			Expr: &vector.CastExpr{X: x, To: vector.Int16, Mode: vector.ModeLegacy}, Want: []any{-1, -25536}},
		vt.ExprCase{Name: "double-timestamp-nan-null", Schema: f64, Rows: column(math.NaN(), 1.5),
			Expr: &vector.CastExpr{X: x, To: vector.Timestamp, Mode: vector.ModeLegacy}, Want: []any{nil, 1_500_000}},
		vt.ExprCase{Name: "try-bigint-int", Schema: i64, Rows: column(int64(3_000_000_000), int64(5)),
			Expr: &vector.CastExpr{X: x, To: vector.Int32, Mode: vector.ModeTry}, Want: []any{nil, 5}},
		vt.ExprCase{Name: "try-double-decimal", Schema: f64, Rows: column(1e10, 1.5, math.NaN()),
			Expr: &vector.CastExpr{X: x, To: vector.Decimal(4, 2), Mode: vector.ModeTry}, Want: []any{nil, "1.50", nil}},
		vt.ExprCase{Name: "ansi-tinyint", Schema: i64, Rows: column(int64(1), int64(300)),
			Expr: &vector.CastExpr{X: x, To: vector.Int8}, WantErr: `[CAST_OVERFLOW] The value 300L of the type "BIGINT" cannot be cast to "TINYINT"`},
	)
}

// TestLegacyAndTryArithmetic: ANSI raises, legacy wraps or gives NULL for
// a zero divisor, try_ gives NULL.
func TestLegacyAndTryArithmetic(t *testing.T) {
	ab := schemaOf("a", vector.Int64, "b", vector.Int64)
	d := schemaOf("a", vector.Decimal(38, 0), "b", vector.Decimal(38, 0))
	a, b := vector.Col("a"), vector.Col("b")
	arith := func(op vector.ArithOp, m vector.EvalMode) vector.Expr {
		return &vector.Arithmetic{Op: op, Left: a, Right: b, Mode: m}
	}
	rows := []vt.Row{{int64(math.MaxInt64), int64(1)}, {int64(6), int64(0)}, {int64(7), int64(2)}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "legacy-add-wraps", Schema: ab, Rows: rows[:1], Expr: arith(vector.ArithAdd, vector.ModeLegacy), Want: []any{int64(math.MinInt64)}},
		vt.ExprCase{Name: "try-add", Schema: ab, Rows: rows, Expr: arith(vector.ArithAdd, vector.ModeTry), Want: []any{nil, 6, 9}},
		vt.ExprCase{Name: "try-mul", Schema: ab, Rows: rows, Expr: arith(vector.ArithMul, vector.ModeTry), Want: []any{int64(math.MaxInt64), 0, 14}},
		vt.ExprCase{Name: "legacy-mod-zero", Schema: ab, Rows: rows, Expr: arith(vector.ArithMod, vector.ModeLegacy), Want: []any{0, nil, 1}},
		vt.ExprCase{Name: "try-div-zero", Schema: ab, Rows: rows, Expr: arith(vector.ArithDiv, vector.ModeTry), Want: []any{float64(math.MaxInt64), nil, 3.5}},
		vt.ExprCase{Name: "ansi-div-zero", Schema: ab, Rows: rows, Expr: arith(vector.ArithDiv, vector.ModeANSI), WantErr: "[DIVIDE_BY_ZERO] division by zero in (a / b) at row"},
		vt.ExprCase{Name: "legacy-decimal-overflow", Schema: d, Rows: []vt.Row{{"99999999999999999999999999999999999999", "1"}, {"1", "2"}},
			Expr: arith(vector.ArithAdd, vector.ModeLegacy), Want: []any{nil, "3"}},
		vt.ExprCase{Name: "try-decimal-div-zero", Schema: d, Rows: []vt.Row{{"1", "0"}, {"4", "2"}},
			Expr: arith(vector.ArithMod, vector.ModeTry), Want: []any{nil, "0"}},
		vt.ExprCase{Name: "legacy-negate-min", Schema: ab, Rows: []vt.Row{{int64(math.MinInt64), int64(0)}},
			Expr: &vector.Negation{Child: a, Mode: vector.ModeLegacy}, Want: []any{int64(math.MinInt64)}},
	)
	mem := memory.NewGoAllocator()
	rec := vt.BuildRecord(mem, ab, rows[:1])
	defer rec.Release()
	ev, err := arith(vector.ArithAdd, vector.ModeANSI).Bind(ab, mem)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.Eval(t.Context(), rec)
	var se *vector.SparkError
	if !errors.As(err, &se) || se.Class != "ARITHMETIC_OVERFLOW" || !errors.Is(err, vector.ErrOverflow) {
		t.Fatalf("got %v, want ARITHMETIC_OVERFLOW wrapping ErrOverflow", err)
	}
}
