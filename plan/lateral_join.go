package plan

import (
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// A LATERAL subquery, FROM l, LATERAL (q) or l [LEFT] JOIN LATERAL (q)
// [ON c], may name the columns of l. It is analyzed with l as its
// enclosing scope, so that those names become outerRefs, and then
// decorrelated into ordinary joins, as Spark's DecorrelateInnerQuery does
// with a domain join:
//
//   - D, the domain, is the distinct values of the outer references over
//     l (an Aggregate grouped by them, without aggregates);
//   - the subquery's plan is rewritten bottom-up into one that also
//     outputs D's columns and computes, for every row of D, what the
//     subquery computes for those outer values (lateralize): a subtree
//     without outer references is cross-joined with D, a Filter or
//     Project evaluates its outer references as D's columns, an Aggregate
//     also groups by them (a global aggregate keeps exactly one row per
//     row of D, the value it has on no input when none matched), a join
//     carries D through its correlated sides;
//   - l is joined with the rewritten plan on the outer values being equal
//     or both NULL (<=>), with the join's own ON condition, and D's
//     columns are projected away.
//
// What cannot be rewritten so (LIMIT, window functions, set operations,
// generators over outer values in the subquery) is refused with Spark's
// error class, never answered.

// lateralJoin joins scope l with the LATERAL subquery x: typ is InnerJoin
// (comma, JOIN, CROSS JOIN) or LeftOuterJoin, on the optional condition.
func (a *analyzer) lateralJoin(l *scope, x *sql.SubqueryRef, typ JoinType, on sql.Expr) (*scope, error) {
	ctx := &outerCtx{sc: l, lateral: true}
	a.outer = append(a.outer, ctx)
	sc, err := a.query(x.Query)
	a.outer = a.outer[:len(a.outer)-1]
	if err != nil {
		return nil, err
	}
	r, err := a.subqueryRefScope(x, sc)
	if err != nil {
		return nil, err
	}
	if err := lateralDeterministic(x.Pos, r.node); err != nil {
		return nil, err
	}
	var cond Expr
	if on != nil {
		both := &scope{node: newJoinInput(l.node, r.node), cols: append(append([]scopeCol(nil), l.cols...), r.cols...)}
		res := &resolver{b: a.b, sc: both, clause: "ON"}
		c, err := res.expr(on)
		if err != nil {
			return nil, err
		}
		if cond, err = requireBoolean(on.Position(), "ON", c); err != nil {
			return nil, err
		}
		if hasNondeterministic(cond) {
			return nil, errorAt(on.Position(), ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.LATERAL_JOIN_CONDITION_NON_DETERMINISTIC] Lateral join condition cannot be non-deterministic: %s.", sql.Format(on))
		}
	}
	if len(ctx.refs) == 0 {
		return joinScopes(l, r, typ, cond)
	}
	if l.node.IsStreaming() || r.node.IsStreaming() {
		return nil, errorAt(x.Pos, ErrStreaming, "A correlated LATERAL subquery over a stream is not supported: it joins tables, not streams.")
	}
	keys := make([]NamedExpr, len(ctx.refs))
	for i, e := range ctx.refs {
		keys[i] = NamedExpr{Name: "_lateral" + strconv.Itoa(i), Expr: e}
	}
	dom, err := NewAggregate(l.node, keys, nil)
	if err != nil {
		return nil, err
	}
	rn, err := lateralize(r.node, dom)
	if err != nil {
		return nil, errAt(x.Pos, err)
	}
	nl, nr, k := l.node.Schema().NumFields(), r.node.Schema().NumFields(), len(ctx.refs)
	js := joinedSchema(l.node.Schema(), rn.Schema())
	conds := make([]Expr, 0, k+1)
	if cond != nil {
		conds = append(conds, cond)
	}
	for i, e := range ctx.refs {
		eq, err := newCall(x.Pos, "<=>", e, ColumnOf(js, nl+nr+i))
		if err != nil {
			return nil, err
		}
		conds = append(conds, eq)
	}
	j, err := NewJoin(l.node, rn, typ, conjoin(conds))
	if err != nil {
		return nil, err
	}
	p, err := keepColumns(j, nl+nr)
	if err != nil {
		return nil, err
	}
	return &scope{node: p, cols: append(append([]scopeCol(nil), l.cols...), r.cols...)}, nil
}

// lateralOuter is the scope a LATERAL subquery being analyzed may
// reference (nil outside one, or nil analyzer).
func (a *analyzer) lateralOuter() *scope {
	if a == nil || len(a.outer) == 0 || !a.outer[len(a.outer)-1].lateral {
		return nil
	}
	return a.outer[len(a.outer)-1].sc
}

// errAt gives an error without a position the position of the LATERAL
// keyword.
func errAt(pos sql.Pos, err error) error {
	if e, ok := err.(*Error); ok && e.Pos == (sql.Pos{}) {
		c := *e
		c.Pos = pos
		return &c
	}
	return err
}

// lateralDeterministic refuses a lateral subquery that calls a
// nondeterministic function: joined with more than one outer row, its
// values would depend on how often it is evaluated (Spark refuses it
// unless the outer side has one row, which is not known here).
func lateralDeterministic(pos sql.Pos, n Node) error {
	for _, e := range nodeExprs(n) {
		if hasNondeterministic(e) {
			return errorAt(pos, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.NON_DETERMINISTIC_LATERAL_SUBQUERIES] Non-deterministic lateral subqueries are not supported when joining with outer relations that produce more than one row: %s.", e)
		}
	}
	for _, c := range n.Children() {
		if err := lateralDeterministic(pos, c); err != nil {
			return err
		}
	}
	return nil
}

func errLateral(what string) error {
	return errorAt(sql.Pos{}, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_REFERENCE] A LATERAL subquery cannot reference the outer query in %s.", what)
}

// withDomain substitutes, in e (an expression over a node whose columns
// are followed by the domain's at base), the domain's columns for the
// outer references.
func withDomain(e Expr, dom Node, base int) Expr {
	ds := dom.Schema()
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if o, ok := x.(*outerRef); ok {
			f := ds.Field(o.index)
			return &ColumnRef{Index: base + o.index, Name: f.Name, Type: f.Type, Null: f.Nullable}, nil
		}
		return x, nil
	})
	return out
}

// lateralize rewrites the plan n, whose expressions may hold outerRefs,
// into one without them whose output is n's columns followed by the
// domain's, with, for every row of the domain, the rows n has when its
// outer references take that row's values.
func lateralize(n Node, dom Node) (Node, error) {
	if !nodeHasOuter(n) {
		return NewJoin(n, dom, InnerJoin, nil)
	}
	switch x := n.(type) {
	case *Filter:
		in, err := lateralize(x.Input, dom)
		if err != nil {
			return nil, err
		}
		return NewFilter(in, withDomain(x.Cond, dom, x.Input.Schema().NumFields()))
	case *SubqueryAlias:
		in, err := lateralize(x.Input, dom)
		if err != nil {
			return nil, err
		}
		return &SubqueryAlias{Input: in, Alias: x.Alias}, nil
	case *Sort:
		for _, k := range x.Keys {
			if exprHasOuter(k.Expr) {
				return nil, errLateral("ORDER BY")
			}
		}
		// Without a LIMIT (refused) the order of the rows does not matter.
		return lateralize(x.Input, dom)
	case *Project:
		in, err := lateralize(x.Input, dom)
		if err != nil {
			return nil, err
		}
		base := x.Input.Schema().NumFields()
		exprs := make([]NamedExpr, 0, len(x.Exprs)+dom.Schema().NumFields())
		for _, e := range x.Exprs {
			exprs = append(exprs, NamedExpr{Name: e.Name, Expr: withDomain(e.Expr, dom, base)})
		}
		return NewProject(in, append(exprs, domainColumns(in.Schema(), base, dom.Schema().NumFields())...))
	case *Aggregate:
		return lateralizeAggregate(x, dom)
	case *Join:
		return lateralizeJoin(x, dom)
	case *Limit:
		return nil, errLateral("a subquery with LIMIT")
	}
	return nil, errLateral(operatorName(n))
}

// domainColumns are references to the k domain columns at base of s.
func domainColumns(s *arrow.Schema, base, k int) []NamedExpr {
	out := make([]NamedExpr, k)
	for i := range out {
		out[i] = NamedExpr{Name: s.Field(base + i).Name, Expr: ColumnOf(s, base+i)}
	}
	return out
}

// columnsOf are references to the columns from..to-1 of s.
func columnsOf(s *arrow.Schema, from, to int) []NamedExpr {
	out := make([]NamedExpr, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, NamedExpr{Name: s.Field(i).Name, Expr: ColumnOf(s, i)})
	}
	return out
}

// lateralizeAggregate groups by the domain's columns too. A global
// aggregate (no GROUP BY) has exactly one row for every row of the
// domain, also when none of its input rows belongs to it: then each
// aggregate has its value on no input (count 0, sum NULL...), which an
// aggregate of no rows computes; a marker count(*) tells the two apart
// after the domain is left-joined with the grouped result.
func lateralizeAggregate(x *Aggregate, dom Node) (Node, error) {
	in, err := lateralize(x.Input, dom)
	if err != nil {
		return nil, err
	}
	base := x.Input.Schema().NumFields()
	k := dom.Schema().NumFields()
	ins := in.Schema()
	keys := make([]NamedExpr, 0, len(x.GroupBy)+k)
	for _, g := range x.GroupBy {
		keys = append(keys, NamedExpr{Name: g.Name, Expr: withDomain(g.Expr, dom, base)})
	}
	keys = append(keys, domainColumns(ins, base, k)...)
	aggs := make([]AggregateExpr, len(x.Aggs))
	for i, ag := range x.Aggs {
		c := ag
		c.Args = make([]Expr, len(ag.Args))
		for j, e := range ag.Args {
			c.Args[j] = withDomain(e, dom, base)
		}
		aggs[i] = c
	}
	nk, na := len(x.GroupBy), len(aggs)
	if nk > 0 {
		agg, err := NewAggregate(in, keys, aggs)
		if err != nil {
			return nil, err
		}
		s := agg.Schema()
		exprs := columnsOf(s, 0, nk)
		exprs = append(exprs, columnsOf(s, nk+k, nk+k+na)...)
		return NewProject(agg, append(exprs, columnsOf(s, nk, nk+k)...))
	}
	present := AggregateExpr{Func: vector.AggCountStar, Name: "_present", Type: vector.Int64}
	grouped, err := NewAggregate(in, keys, append(append([]AggregateExpr(nil), aggs...), present))
	if err != nil {
		return nil, err
	}
	none, err := NewFilter(in, &Literal{Value: false, Type: vector.Boolean})
	if err != nil {
		return nil, err
	}
	empty, err := NewAggregate(none, nil, aggs)
	if err != nil {
		return nil, err
	}
	// dom(k) ++ grouped(k + na + 1) ++ empty(na)
	ds, gs := dom.Schema(), grouped.Schema()
	js := joinedSchema(ds, gs)
	conds := make([]Expr, k)
	for i := range conds {
		conds[i] = mustCall("<=>", ColumnOf(js, i), ColumnOf(js, k+i))
	}
	dj, err := NewJoin(dom, grouped, LeftOuterJoin, conjoin(conds))
	if err != nil {
		return nil, err
	}
	all, err := NewJoin(dj, empty, InnerJoin, nil)
	if err != nil {
		return nil, err
	}
	s := all.Schema()
	missing := mustCall("isnull", ColumnOf(s, k+k+na))
	exprs := make([]NamedExpr, 0, na+k)
	for j := 0; j < na; j++ {
		g, e := ColumnOf(s, k+k+j), ColumnOf(s, k+k+na+1+j)
		exprs = append(exprs, NamedExpr{Name: g.Name, Expr: &Case{Whens: []When{{Cond: missing, Then: e}}, Else: g, Type: g.Type}})
	}
	return NewProject(all, append(exprs, columnsOf(s, 0, k)...))
}

// lateralizeJoin carries the domain through a join. When only the left
// side is correlated (and the join keeps left rows: inner, left outer,
// semi, anti), the right side is joined as it is; otherwise both sides
// carry the domain and join on it too.
func lateralizeJoin(x *Join, dom Node) (Node, error) {
	k := dom.Schema().NumFields()
	nl, nr := x.Left.Schema().NumFields(), x.Right.Schema().NumFields()
	l, err := lateralize(x.Left, dom)
	if err != nil {
		return nil, err
	}
	keepsLeft := x.Type == InnerJoin || x.Type == LeftOuterJoin || x.Type == LeftSemiJoin || x.Type == LeftAntiJoin
	rightCorr := nodeHasOuter(x.Right)
	// The condition is over left(nl) ++ right(nr); the new join's input is
	// left(nl) ++ dom(k) ++ right(nr) [++ dom(k)].
	var cond Expr
	if x.Cond != nil {
		cond, _ = Transform(x.Cond, func(e Expr) (Expr, error) {
			if c, ok := e.(*ColumnRef); ok && c.Index >= nl {
				return shift(c, k), nil
			}
			return e, nil
		})
		cond = withDomain(cond, dom, nl)
	}
	r := x.Right
	if rightCorr || !keepsLeft {
		if x.Type == FullOuterJoin {
			return nil, errLateral("a FULL OUTER JOIN")
		}
		if r, err = lateralize(x.Right, dom); err != nil {
			return nil, err
		}
		js := joinedSchema(l.Schema(), r.Schema())
		conds := make([]Expr, 0, k+1)
		if cond != nil {
			conds = append(conds, cond)
		}
		for i := 0; i < k; i++ {
			conds = append(conds, mustCall("<=>", ColumnOf(js, nl+i), ColumnOf(js, nl+k+nr+i)))
		}
		cond = conjoin(conds)
	}
	j, err := NewJoin(l, r, x.Type, cond)
	if err != nil {
		return nil, err
	}
	if x.Type == LeftSemiJoin || x.Type == LeftAntiJoin {
		return j, nil
	}
	s := j.Schema()
	exprs := columnsOf(s, 0, nl)
	exprs = append(exprs, columnsOf(s, nl+k, nl+k+nr)...)
	dbase := nl
	if x.Type == RightOuterJoin {
		dbase = nl + k + nr
	}
	return NewProject(j, append(exprs, domainColumns(s, dbase, k)...))
}
