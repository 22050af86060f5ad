package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// replicateRows is the internal function [1..n] whose explosion repeats a
// row n times (see vector.ReplicateCount).
const replicateRows = "replicate_rows"

// setOpAll plans left EXCEPT ALL right and left INTERSECT ALL right (the
// inputs already widened to the same types), as Spark's
// RewriteExceptAll and RewriteIntersectAll: tag each side's rows, count
// them per distinct row (NULLs group together), keep the rows with a
// positive difference (EXCEPT ALL) or present on both sides (INTERSECT
// ALL), and repeat each that many times (the difference, or the smaller
// count).
func setOpAll(op sql.SetOp, l, r Node) (Node, error) {
	n := l.Schema().NumFields()
	tagged := func(in Node, tags ...Expr) (Node, error) {
		exprs := identityExprs(in.Schema(), n)
		for i, t := range tags {
			exprs = append(exprs, NamedExpr{Name: "_tag" + itoa(i), Expr: t})
		}
		return NewProject(in, exprs)
	}
	one := func(v int64) Expr { return &Literal{Value: v, Type: vector.Int64} }
	nullBool := &Literal{Type: vector.Boolean}
	var lt, rt []Expr
	if op == sql.SetExcept {
		lt, rt = []Expr{one(1)}, []Expr{one(-1)}
	} else {
		lt, rt = []Expr{litTrue, nullBool}, []Expr{nullBool, litTrue}
	}
	lp, err := tagged(l, lt...)
	if err != nil {
		return nil, err
	}
	rp, err := tagged(r, rt...)
	if err != nil {
		return nil, err
	}
	un, err := NewUnion(lp, rp)
	if err != nil {
		return nil, err
	}
	us := un.Schema()
	var aggs []AggregateExpr
	if op == sql.SetExcept {
		aggs = []AggregateExpr{{Func: vector.AggSum, Args: []Expr{ColumnOf(us, n)}, Name: "_sum"}}
	} else {
		aggs = []AggregateExpr{
			{Func: vector.AggCount, Args: []Expr{ColumnOf(us, n)}, Name: "_left", Type: vector.Int64},
			{Func: vector.AggCount, Args: []Expr{ColumnOf(us, n+1)}, Name: "_right", Type: vector.Int64},
		}
	}
	for i := range aggs {
		t, err := aggResultType(&aggs[i])
		if err != nil {
			return nil, err
		}
		aggs[i].Type = t
	}
	agg, err := NewAggregate(un, identityExprs(us, n), aggs)
	if err != nil {
		return nil, err
	}
	as := agg.Schema()
	var keep, count Expr
	if op == sql.SetExcept {
		count = ColumnOf(as, n)
		keep = mustCall(">", count, one(0))
	} else {
		lc, rc := ColumnOf(as, n), ColumnOf(as, n+1)
		keep = mustCall("and", mustCall(">=", lc, one(1)), mustCall(">=", rc, one(1)))
		count = &Case{Type: vector.Int64, Whens: []When{{Cond: mustCall(">", lc, rc), Then: rc}}, Else: lc}
	}
	f, err := NewFilter(agg, keep)
	if err != nil {
		return nil, err
	}
	rep := &Call{Func: replicateRows, Args: []Expr{count}, Type: arrow.ListOf(vector.Int64), Null: false}
	ex, err := NewExplode(f, rep, "_copy", false)
	if err != nil {
		return nil, err
	}
	out := identityExprs(ex.Schema(), n)
	for i := range out {
		out[i].Name = l.Schema().Field(i).Name
	}
	return NewProject(ex, out)
}
