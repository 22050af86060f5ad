package plan

import (
	"github.com/arrowstream/arrowstream/sql"
)

// A subquery in a join's ON condition, l JOIN r ON l.id = r.id AND l.id
// IN (SELECT ...), is evaluated once per row of the side it reads: its
// value is joined to that side as an extra column (planSubqueries, as in
// a select list), the join's condition reads the column, and a
// projection drops the extra columns again. The condition then holds for
// a pair of rows exactly when it held with the subquery evaluated for the
// pair, whatever the join type, which is what Spark's
// RewritePredicateSubquery gives for a join condition.

// joinOnSubqueries joins l and r on cond, which holds subquery
// expressions; each must read only one side (its compared value and its
// outer references), or none.
func joinOnSubqueries(pos sql.Pos, l, r *scope, typ JoinType, cond Expr) (*scope, error) {
	nl, nr := l.node.Schema().NumFields(), r.node.Schema().NumFields()
	var left, right []*subqueryExpr
	var side map[int]bool // subquery id -> on the right
	side = map[int]bool{}
	var bad error
	Walk(cond, func(x Expr) bool {
		s, ok := x.(*subqueryExpr)
		if !ok {
			return bad == nil
		}
		lo, hi := false, false
		for _, k := range s.Children() {
			for _, c := range Columns(k) {
				if c < nl {
					lo = true
				} else {
					hi = true
				}
			}
		}
		switch {
		case lo && hi:
			bad = errorAt(s.pos, ErrUnsupported, "A subquery in a join condition that reads both sides of the join is not supported: %s.", s)
		case hi:
			right = append(right, s.withChildren(shiftAll(s.Children(), -nl)))
			side[s.id] = true
		default:
			left = append(left, s)
		}
		return false
	})
	if bad != nil {
		return nil, bad
	}
	ln, lv, err := planSubqueries(l.node, subqueryList(left))
	if err != nil {
		return nil, err
	}
	rn, rv, err := planSubqueries(r.node, subqueryList(right))
	if err != nil {
		return nil, err
	}
	nl2 := ln.Schema().NumFields()
	value := map[int]Expr{}
	for i, s := range left {
		value[s.id] = lv[i]
	}
	for i, s := range right {
		value[s.id] = shiftColumns(rv[i], nl2)
	}
	c := replaceJoinSubqueries(cond, value, nl, nl2-nl)
	j, err := NewJoin(ln, rn, typ, c)
	if err != nil {
		return nil, err
	}
	exprs := identityExprs(j.Schema(), nl)
	cols := append([]scopeCol(nil), l.cols...)
	if typ != LeftSemiJoin && typ != LeftAntiJoin {
		exprs = append(exprs, columnsOf(j.Schema(), nl2, nl2+nr)...)
		cols = append(cols, r.cols...)
	}
	p, err := NewProject(j, exprs)
	if err != nil {
		return nil, errAt(pos, err)
	}
	return &scope{node: p, cols: cols}, nil
}

func subqueryList(ss []*subqueryExpr) []Expr {
	out := make([]Expr, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func shiftAll(es []Expr, by int) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = shiftColumns(e, by)
	}
	return out
}

// replaceJoinSubqueries rewrites a join condition over l(nl) ++ r onto
// l(nl) ++ extra ++ r: right columns move by extra, and each subquery
// becomes its value (already over the new input).
func replaceJoinSubqueries(e Expr, value map[int]Expr, nl, extra int) Expr {
	switch x := e.(type) {
	case *subqueryExpr:
		return value[x.id]
	case *ColumnRef:
		if x.Index >= nl {
			return shift(x, extra)
		}
		return x
	}
	kids := e.Children()
	if len(kids) == 0 {
		return e
	}
	nk := make([]Expr, len(kids))
	for i, k := range kids {
		nk[i] = replaceJoinSubqueries(k, value, nl, extra)
	}
	return WithChildren(e, nk)
}
