package plan

import (
	"github.com/arrowstream/arrowstream/sql"
)

// setOp analyzes left EXCEPT [DISTINCT] right and left INTERSECT
// [DISTINCT] right: the distinct rows of left that are (INTERSECT) or are
// not (EXCEPT) among right's rows, comparing NULLs as equal, as Spark
// does. The column types widen as for UNION. They are a left semi or anti
// join on null-safe equality of every column, then DISTINCT (Spark's
// ReplaceExceptWithAntiJoin and ReplaceIntersectWithSemiJoin).
func (a *analyzer) setOp(u *sql.Union) (*scope, error) {
	nodes := make([]Node, 2)
	for i, in := range []sql.QueryBody{u.Left, u.Right} {
		sc, err := a.body(in)
		if err != nil {
			return nil, err
		}
		if nodes[i], err = a.finish(sc); err != nil {
			return nil, err
		}
	}
	if err := a.legacySetOpCheck(u.Pos, nodes); err != nil {
		return nil, err
	}
	widened, err := unionOf(u.Pos, nodes)
	if err != nil {
		return nil, err
	}
	in := widened.(*Union).Inputs
	l, r := in[0], in[1]
	if u.All {
		n, err := setOpAll(u.Op, l, r)
		if err != nil {
			return nil, errorAt(u.Pos, ErrType, "%v", trimSentinel(err))
		}
		return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
	}
	both := newJoinInput(l, r).Schema()
	nl := l.Schema().NumFields()
	conds := make([]Expr, nl)
	for i := range conds {
		conds[i] = mustCall("<=>", ColumnOf(both, i), ColumnOf(both, nl+i))
	}
	typ := LeftAntiJoin
	if u.Op == sql.SetIntersect {
		typ = LeftSemiJoin
	}
	j, err := NewJoin(l, r, typ, conjoin(conds))
	if err != nil {
		return nil, errorAt(u.Pos, ErrType, "%v", trimSentinel(err))
	}
	n, err := distinctOf(j)
	if err != nil {
		return nil, err
	}
	return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
}
