package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestCase(t *testing.T) {
	T, F := true, false
	a := exprSchema("a", vector.Int64)
	arows := []vt.Row{{5}, {-3}, {0}, {nil}}
	sign := vector.Case([]vector.When{
		{Cond: vector.Gt(col("a"), lit(0)), Then: lit("pos")},
		{Cond: vector.Lt(col("a"), lit(0)), Then: lit("neg")},
	}, lit("zero"))
	pia := exprSchema("p", vector.Boolean, "i", vector.Int32, "a", vector.Int64)
	piaRows := []vt.Row{{T, 1, 10}, {F, 2, 20}, {nil, 3, 30}, {T, nil, 40}, {F, 5, nil}}
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	abRows := []vt.Row{{10, 2}, {10, 0}, {nil, 0}, {7, nil}}
	pw := exprSchema("p", vector.Boolean, "window", vector.WindowType)
	pxy := exprSchema("p", vector.Boolean, "x", vector.Decimal(5, 2), "y", vector.Decimal(6, 1))
	pst := exprSchema("p", vector.Boolean, "s", dictStringType, "t", vector.String)
	as := exprSchema("a", vector.Int64, "s", vector.String)
	vt.RunExpr(t,
		vt.ExprCase{Name: "strings", Schema: a, Rows: arows, Expr: sign, WantType: vector.String, Want: []any{"pos", "neg", "zero", "zero"}},
		vt.ExprCase{Name: "no-else", Schema: a, Rows: arows, Expr: vector.Case([]vector.When{{Cond: vector.Gt(col("a"), lit(0)), Then: col("a")}}, nil),
			WantType: vector.Int64, Want: []any{5, nil, nil, nil}},
		vt.ExprCase{Name: "widen", Schema: pia, Rows: piaRows, Expr: vector.If(col("p"), col("i"), col("a")),
			WantType: vector.Int64, Want: []any{1, 20, 30, nil, nil}},
		vt.ExprCase{Name: "const-branches", Schema: pia, Rows: piaRows, Expr: vector.If(col("p"), lit(1), lit(int64(2))),
			WantType: vector.Int64, Want: []any{1, 2, 2, 1, 2}},
		vt.ExprCase{Name: "null-branch", Schema: pia, Rows: piaRows, Expr: vector.If(col("p"), lit(nil), col("i")),
			WantType: vector.Int32, Want: []any{nil, 2, 3, nil, 5}},
		vt.ExprCase{Name: "bool", Schema: pia, Rows: piaRows, Expr: vector.If(col("p"), lit(false), vector.Gt(col("i"), lit(2))),
			WantType: vector.Boolean, Want: []any{F, F, T, F, T}},
		vt.ExprCase{Name: "decimal", Schema: pxy, Rows: []vt.Row{{T, "1.25", "10.5"}, {F, "1.25", "10.5"}}, Expr: vector.If(col("p"), col("x"), col("y")),
			WantType: vector.Decimal(7, 2), Want: []any{"1.25", "10.50"}},
		vt.ExprCase{Name: "dict-string", Schema: pst, Rows: []vt.Row{{T, "a", "b"}, {F, "a", "b"}, {nil, nil, nil}}, Expr: vector.If(col("p"), col("s"), col("t")),
			WantType: vector.String, Want: []any{"a", "b", nil}},
		vt.ExprCase{Name: "struct", Schema: pw, Rows: []vt.Row{{T, []any{1, 2}}, {F, []any{3, 4}}, {T, nil}},
			Expr:     vector.If(col("p"), col("window"), vector.TypedLit(vector.WindowType, []any{7, 8})),
			WantType: vector.WindowType, Want: []any{[]any{1, 2}, []any{7, 8}, nil}},
		vt.ExprCase{Name: "lazy", Schema: ab, Rows: abRows,
			Expr:     vector.Case([]vector.When{{Cond: vector.NotEq(col("b"), lit(0)), Then: vector.Div(col("a"), col("b"))}}, lit(0)),
			WantType: vector.Float64, Want: []any{5.0, 0.0, 0.0, 0.0}},
		vt.ExprCase{Name: "lazy-cond", Schema: ab, Rows: abRows,
			Expr: vector.Case([]vector.When{
				{Cond: vector.Eq(col("b"), lit(0)), Then: lit(-1)},
				{Cond: vector.Gt(vector.Mod(col("a"), col("b")), lit(0)), Then: lit(1)},
			}, lit(0)),
			Want: []any{0, -1, -1, 0}},
		vt.ExprCase{Name: "needed-error", Schema: ab, Rows: abRows[1:2],
			Expr:    vector.Case([]vector.When{{Cond: vector.Gt(col("a"), lit(0)), Then: vector.Mod(col("a"), col("b"))}}, nil),
			WantErr: "division by zero in (a % b) at row 0 (a=10, b=0)"},
		vt.ExprCase{Name: "const-true", Schema: a, Rows: arows, Expr: vector.Case([]vector.When{{Cond: lit(false), Then: lit(1)}, {Cond: lit(true), Then: col("a")}}, lit(3)),
			WantType: vector.Int64, Want: []any{5, -3, 0, nil}},
		vt.ExprCase{Name: "const-null", Schema: a, Rows: arows, Expr: vector.Case([]vector.When{{Cond: lit(nil), Then: lit(1)}}, col("a")),
			Want: []any{5, -3, 0, nil}},
		vt.ExprCase{Name: "mixed-consts", Schema: a, Rows: arows, Expr: vector.Case([]vector.When{
			{Cond: vector.Gt(col("a"), lit(0)), Then: lit(1)}, {Cond: lit(true), Then: lit(2)}, {Cond: vector.Lt(col("a"), lit(0)), Then: lit(3)}}, nil),
			Want: []any{1, 2, 2, 2}},
		vt.ExprCase{Name: "bad-cond", Schema: a, Rows: arows, Expr: vector.If(col("a"), lit(1), lit(2)),
			WantErr: "cannot bind CASE WHEN a THEN 1 ELSE 2 END: WHEN a must be boolean, not bigint: type mismatch (available columns: a)"},
		vt.ExprCase{Name: "bad-branches", Schema: as, Rows: []vt.Row{{1, "x"}}, Expr: vector.If(lit(true), col("a"), col("s")),
			WantErr: "CASE branches have incompatible types bigint and string"},
	)
}

func TestCoalesce(t *testing.T) {
	abc := exprSchema("a", vector.Int64, "b", vector.Int64, "i", vector.Int32)
	rows := []vt.Row{{1, 2, 3}, {nil, 2, 3}, {nil, nil, 3}, {nil, nil, nil}}
	st := exprSchema("s", vector.String, "t", vector.String)
	ab := exprSchema("a", vector.Int64, "b", vector.Int64)
	as := exprSchema("a", vector.Int64, "s", vector.String)
	vt.RunExpr(t,
		vt.ExprCase{Name: "ints", Schema: abc, Rows: rows, Expr: vector.Coalesce(col("a"), col("b"), col("i")), WantType: vector.Int64,
			Want: []any{1, 2, 3, nil}},
		vt.ExprCase{Name: "default", Schema: abc, Rows: rows, Expr: vector.Coalesce(col("a"), col("b"), lit(0)), Want: []any{1, 2, 0, 0}},
		vt.ExprCase{Name: "first-full", Schema: abc, Rows: rows[:1], Expr: vector.Coalesce(col("a"), col("b")), Want: []any{1}},
		vt.ExprCase{Name: "nulls-skipped", Schema: abc, Rows: rows, Expr: vector.Coalesce(lit(nil), col("a"), lit(nil)), WantType: vector.Int64,
			Want: []any{1, nil, nil, nil}},
		vt.ExprCase{Name: "const-first", Schema: abc, Rows: rows, Expr: vector.Coalesce(lit(int64(9)), col("a")), Want: []any{9, 9, 9, 9}},
		vt.ExprCase{Name: "all-null", Schema: abc, Rows: rows[:2], Expr: vector.Coalesce(lit(nil), lit(nil)), Want: []any{nil, nil}},
		vt.ExprCase{Name: "strings", Schema: st, Rows: []vt.Row{{"x", "y"}, {nil, "y"}, {nil, nil}}, Expr: vector.Coalesce(col("s"), col("t"), lit("")),
			WantType: vector.String, Want: []any{"x", "y", ""}},
		vt.ExprCase{Name: "lazy", Schema: ab, Rows: []vt.Row{{1, 0}, {nil, 5}}, Expr: vector.Coalesce(col("a"), vector.Mod(lit(int64(10)), col("b"))),
			Want: []any{1, 0}},
		vt.ExprCase{Name: "bad", Schema: as, Rows: []vt.Row{{1, "x"}}, Expr: vector.Coalesce(col("a"), col("s")),
			WantErr: "cannot bind coalesce(a, s): coalesce branches have incompatible types bigint and string"},
	)
}

func TestCaseString(t *testing.T) {
	for e, want := range map[vector.Expr]string{
		vector.Case([]vector.When{{Cond: vector.Gt(col("a"), lit(0)), Then: lit("p")}}, nil):      "CASE WHEN (a > 0) THEN 'p' END",
		vector.If(col("p"), lit(1), lit(2)):                                                       "CASE WHEN p THEN 1 ELSE 2 END",
		vector.Coalesce(col("a"), lit(0)):                                                         "coalesce(a, 0)",
		vector.And(vector.IsNull(col("a")), vector.Not(vector.EqualNullSafe(col("a"), col("b")))): "((a IS NULL) AND (NOT (a <=> b)))",
		vector.Or(vector.IsNotNull(col("a")), vector.Le(col("a"), lit(1))):                        "((a IS NOT NULL) OR (a <= 1))",
	} {
		if got := e.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
}

// TestCaseInterval: CASE with interval branches expands its constant
// branches with MakeConstantArray, which did not know the interval type
// ("cannot append 5 (arrow.Duration) to a duration[us] column"; found by
// FuzzExprEval through its constant check).
func TestCaseInterval(t *testing.T) {
	p := exprSchema("p", vector.Boolean)
	vt.RunExpr(t,
		vt.ExprCase{Name: "branches", Schema: p, Rows: column(true, false, nil),
			Expr:     vector.If(col("p"), vector.IntervalLit(5), vector.IntervalLit(-6)),
			WantType: vector.Interval, Want: []any{arrow.Duration(5), arrow.Duration(-6), arrow.Duration(-6)}},
		vt.ExprCase{Name: "no-else", Schema: p, Rows: column(true, false, nil),
			Expr: vector.Case([]vector.When{{Cond: col("p"), Then: vector.IntervalLit(10_000_000)}}, nil),
			Want: []any{arrow.Duration(10_000_000), nil, nil}},
		vt.ExprCase{Name: "coalesce", Schema: p, Rows: column(true, nil),
			Expr: vector.Coalesce(vector.Lit(nil), vector.IntervalLit(7)), Want: []any{arrow.Duration(7), arrow.Duration(7)}},
	)
}
