package vector_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestLogic(t *testing.T) {
	pq := exprSchema("p", vector.Boolean, "q", vector.Boolean)
	T, F := true, false
	var rows []vt.Row
	for _, p := range []any{T, F, nil} {
		for _, q := range []any{T, F, nil} {
			rows = append(rows, vt.Row{p, q})
		}
	}
	// p:      T T T F F F N N N
	// q:      T F N T F N T F N
	and := []any{T, F, nil, F, F, F, nil, F, nil}
	or := []any{T, T, T, T, F, nil, T, nil, nil}
	p := exprSchema("p", vector.Boolean)
	prows := []vt.Row{{T}, {F}, {nil}}
	a := exprSchema("a", vector.Int64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "and", Schema: pq, Rows: rows, Expr: vector.And(col("p"), col("q")), Want: and, WantType: vector.Boolean},
		vt.ExprCase{Name: "or", Schema: pq, Rows: rows, Expr: vector.Or(col("p"), col("q")), Want: or, WantType: vector.Boolean},
		vt.ExprCase{Name: "and-swapped", Schema: pq, Rows: rows, Expr: vector.And(col("q"), col("p")), Want: and},
		vt.ExprCase{Name: "or-swapped", Schema: pq, Rows: rows, Expr: vector.Or(col("q"), col("p")), Want: or},
		vt.ExprCase{Name: "not", Schema: p, Rows: prows, Expr: vector.Not(col("p")), Want: []any{F, T, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "and-true", Schema: p, Rows: prows, Expr: vector.And(col("p"), lit(true)), Want: []any{T, F, nil}},
		vt.ExprCase{Name: "and-false", Schema: p, Rows: prows, Expr: vector.And(lit(false), col("p")), Want: []any{F, F, F}},
		vt.ExprCase{Name: "and-null", Schema: p, Rows: prows, Expr: vector.And(col("p"), lit(nil)), Want: []any{nil, F, nil}},
		vt.ExprCase{Name: "null-and", Schema: p, Rows: prows, Expr: vector.And(lit(nil), col("p")), Want: []any{nil, F, nil}},
		vt.ExprCase{Name: "or-true", Schema: p, Rows: prows, Expr: vector.Or(col("p"), lit(true)), Want: []any{T, T, T}},
		vt.ExprCase{Name: "or-false", Schema: p, Rows: prows, Expr: vector.Or(lit(false), col("p")), Want: []any{T, F, nil}},
		vt.ExprCase{Name: "or-null", Schema: p, Rows: prows, Expr: vector.Or(col("p"), lit(nil)), Want: []any{T, nil, nil}},
		vt.ExprCase{Name: "consts", Schema: p, Rows: prows, Expr: vector.Or(lit(nil), lit(false)), Want: []any{nil, nil, nil}},
		vt.ExprCase{Name: "not-const", Schema: p, Rows: prows, Expr: vector.Not(lit(false)), Want: []any{T, T, T}},
		vt.ExprCase{Name: "is-null", Schema: a, Rows: []vt.Row{{1}, {nil}}, Expr: vector.IsNull(col("a")), Want: []any{F, T}},
		vt.ExprCase{Name: "is-not-null", Schema: a, Rows: []vt.Row{{1}, {nil}}, Expr: vector.IsNotNull(col("a")), Want: []any{T, F}},
		vt.ExprCase{Name: "is-null-const", Schema: a, Rows: []vt.Row{{1}, {nil}}, Expr: vector.IsNull(lit(nil)), Want: []any{T, T}},
		vt.ExprCase{Name: "is-null-struct", Schema: windowSchema, Rows: windowRows, Expr: vector.IsNotNull(col("window")), Want: []any{T, F, T, T}},
		vt.ExprCase{Name: "and-int", Schema: a, Rows: []vt.Row{{1}}, Expr: vector.And(col("a"), lit(true)),
			WantErr: "cannot bind (a AND true): cannot apply AND to bigint and boolean: type mismatch (available columns: a)"},
		vt.ExprCase{Name: "not-int", Schema: a, Rows: []vt.Row{{1}}, Expr: vector.Not(col("a")),
			WantErr: "cannot bind (NOT a): cannot apply NOT to bigint"},
	)
}

// TestLogicLazy checks that the right side of AND / OR is not evaluated
// (or its errors are not raised) for rows the left side decides, as Spark
// short-circuits per row.
func TestLogicLazy(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	rows := []vt.Row{{10, 2}, {10, 0}, {1, 5}, {nil, 0}, {7, nil}}
	guard := vector.And(vector.NotEq(col("b"), lit(0)), vector.Gt(vector.Mod(col("a"), col("b")), lit(0)))
	orGuard := vector.Or(vector.Eq(col("b"), lit(0)), vector.Gt(vector.Mod(col("a"), col("b")), lit(0)))
	vt.RunExpr(t,
		vt.ExprCase{Name: "and-guard", Schema: ab, Rows: rows, Expr: guard, Want: []any{false, false, true, false, nil}},
		vt.ExprCase{Name: "or-guard", Schema: ab, Rows: rows, Expr: orGuard, Want: []any{false, true, true, true, nil}},
		vt.ExprCase{Name: "unguarded", Schema: ab, Rows: rows[1:2], Expr: vector.And(vector.Gt(col("a"), lit(0)), vector.Gt(vector.Mod(col("a"), col("b")), lit(0))),
			WantErr: "division by zero in (a % b) at row 0 (a=10, b=0)"},
		vt.ExprCase{Name: "all-decided", Schema: ab, Rows: rows[:3], Expr: vector.And(vector.Lt(col("a"), lit(0)), vector.Gt(vector.Mod(col("a"), lit(0)), lit(0))),
			Want: []any{false, false, false}},
	)
}

// TestLogicLazyErrorRow checks that an error found on the rows that need
// the right side names the row of the whole batch.
func TestLogicLazyErrorRow(t *testing.T) {
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	rows := []vt.Row{{1, 0}, {1, 0}, {5, 0}, {9223372036854775807, 1}}
	// Rows 0-2 are decided by the left side (b = 0 → false, so
	// (a + b) would not be needed), row 3 overflows in a needed row.
	e := vector.And(vector.NotEq(col("b"), lit(0)), vector.Gt(vector.Add(col("a"), lit(1)), lit(0)))
	vt.RunExpr(t, vt.ExprCase{Name: "row", Schema: ab, Rows: rows, Expr: e,
		WantErr: "(a=9223372036854775807)"})
	mem := vt.NewAllocator(t)
	rec := vt.BuildRecord(mem, ab, []vt.Row{{9223372036854775807, 0}, {9223372036854775807, 1}})
	defer rec.Release()
	ev, err := e.Bind(ab, mem)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.Eval(t.Context(), rec)
	if err == nil || err.Error() != "[ARITHMETIC_OVERFLOW] arithmetic overflow in (a + 1) at row 1 (a=9223372036854775807)" {
		t.Fatalf("got %v", err)
	}
}
