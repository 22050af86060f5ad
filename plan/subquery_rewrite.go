package plan

import (
	"errors"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// This file turns the subquery expressions of a clause into joins, as
// Spark's RewritePredicateSubquery and RewriteCorrelatedScalarSubquery:
// EXISTS and IN conjuncts of a filter become semi joins (NOT EXISTS an
// anti join); every other use becomes a left outer join with an
// aggregate of the subquery that has at most one row per left row, and
// an expression over the joined columns. Joined columns are appended
// after the input's, so the clause's column references stay valid.

var (
	litTrue  = &Literal{Value: true, Type: vector.Boolean}
	litFalse = &Literal{Value: false, Type: vector.Boolean}
	litNullB = &Literal{Type: vector.Boolean}
)

// bindOuter replaces the outerRefs of a hoisted predicate by the values
// they stand for (over the join's left side) and moves its subquery
// columns past the nl left columns.
func bindOuter(e Expr, outer []Expr, nl int) Expr {
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		switch y := x.(type) {
		case *outerRef:
			return outer[y.index], nil
		case *ColumnRef:
			return shift(y, nl), nil
		}
		return x, nil
	})
	return out
}

func countStarAgg(name string) AggregateExpr {
	return AggregateExpr{Func: vector.AggCountStar, Name: name, Type: vector.Int64}
}

// decorrelated decorrelates a subquery expression's plan.
func decorrelated(s *subqueryExpr) (Node, []Expr, bool, error) {
	inner, preds, grouped, err := decorrelate(s.plan)
	if err != nil {
		return nil, nil, false, err
	}
	if nodeHasOuter(inner) {
		return nil, nil, false, errCorrelation("an outer reference that is not in a predicate")
	}
	return inner, preds, grouped, nil
}

// filterWithSubqueries is a filter of input by cond, which may contain
// subquery expressions; the result has input's columns.
func filterWithSubqueries(input Node, cond Expr) (Node, error) {
	if !hasSubquery(cond) {
		return NewFilter(input, cond)
	}
	cur := input
	var rest []Expr
	for _, c := range splitConjuncts(cond) {
		n, ok, err := semiJoin(cur, c)
		if err != nil {
			return nil, err
		}
		if ok {
			cur = n
			continue
		}
		rest = append(rest, c)
	}
	if len(rest) == 0 {
		return cur, nil
	}
	n, rs, err := planSubqueries(cur, rest)
	if err != nil {
		return nil, err
	}
	f, err := NewFilter(n, conjoin(rs))
	if err != nil {
		return nil, err
	}
	return keepColumns(f, input.Schema().NumFields())
}

// keepColumns projects n onto its first k columns (nothing when it has k).
func keepColumns(n Node, k int) (Node, error) {
	if n.Schema().NumFields() == k {
		return n, nil
	}
	return NewProject(n, identityExprs(n.Schema(), k))
}

// semiJoin plans a filter conjunct [NOT] EXISTS (correlated) or x IN
// (query) as a semi (anti) join; ok is false for other conjuncts. A
// multi-column NOT IN conjunct is a null-aware anti join, as Spark's
// RewritePredicateSubquery plans it: a left row goes when some subquery
// row (of its correlation group) has no column pair known to differ,
// since (a, b) = (x, y) is then true or NULL and NOT IN not true.
func semiJoin(left Node, c Expr) (Node, bool, error) {
	typ := LeftSemiJoin
	if n, ok := c.(*Call); ok && n.Func == "not" && len(n.Args) == 1 {
		if s, ok := n.Args[0].(*subqueryExpr); ok && (s.kind == subExists || s.kind == subIn && len(s.lhs) > 1) {
			typ, c = LeftAntiJoin, s
		}
	}
	s, ok := c.(*subqueryExpr)
	if !ok || s.kind == subScalar || s.kind == subExists && len(s.outer) == 0 {
		return nil, false, nil
	}
	inner, preds, _, err := decorrelated(s)
	if err != nil {
		if !isCorrelationErr(err) {
			return nil, false, err
		}
		// Outer references that cannot be pulled up as predicates: the
		// subquery's rows per distinct outer value (a domain join).
		rn, pairs, derr := domainSubquery(left, s)
		if derr != nil {
			return nil, false, derr
		}
		inner, preds = rn, make([]Expr, len(pairs))
		for i, p := range pairs {
			preds[i] = mustCall("<=>", p.outer, p.inner)
		}
	}
	if s.kind == subExists && len(preds) == 0 {
		return nil, false, nil
	}
	nl := left.Schema().NumFields()
	conds := make([]Expr, 0, len(preds)+len(s.lhs))
	for _, p := range preds {
		conds = append(conds, bindOuter(p, s.outer, nl))
	}
	for i, l := range s.lhs {
		eq, err := inEquality(s.pos, l, shift(ColumnOf(inner.Schema(), i), nl))
		if err != nil {
			return nil, false, err
		}
		if typ == LeftAntiJoin {
			eq = mustCall("or", eq, mustCall("isnull", eq))
		}
		conds = append(conds, eq)
	}
	j, err := NewJoin(left, inner, typ, conjoin(conds))
	if err != nil {
		return nil, false, err
	}
	return j, true, nil
}

// planSubqueries rebuilds input so that exprs can be evaluated without
// subquery expressions: each is joined to input and replaced by an
// expression over the joined columns (appended after input's).
func planSubqueries(input Node, exprs []Expr) (Node, []Expr, error) {
	cur := input
	out := make([]Expr, len(exprs))
	for i, e := range exprs {
		if e == nil || !hasSubquery(e) {
			out[i] = e
			continue
		}
		r, err := Transform(e, func(x Expr) (Expr, error) {
			s, ok := x.(*subqueryExpr)
			if !ok {
				return x, nil
			}
			n, v, err := joinSubquery(cur, s)
			if err != nil {
				return nil, err
			}
			cur = n
			return v, nil
		})
		if err != nil {
			return nil, nil, err
		}
		out[i] = r
	}
	return cur, out, nil
}

// joinSubquery left-outer-joins what one subquery expression needs to
// left, at most one row per left row, and returns its value over the
// joined columns.
func joinSubquery(left Node, s *subqueryExpr) (Node, Expr, error) {
	inner, preds, grouped, err := decorrelated(s)
	if err != nil {
		if len(s.outer) == 0 || !isCorrelationErr(err) {
			return nil, nil, err
		}
		// Outer references where they cannot be pulled up as
		// predicates: a domain join, where Spark takes them.
		if s.kind == subScalar {
			return scalarDomain(left, s)
		}
		inner, preds, grouped = nil, nil, false
	}
	nl := left.Schema().NumFields()
	pairs, ok := equalityPairs(preds)
	switch {
	case s.kind == subScalar && len(preds) == 0 && inner != nil:
		return scalarUncorrelated(left, inner)
	case s.kind == subScalar:
		if !grouped || !ok {
			return scalarDomain(left, s)
		}
		return scalarCorrelated(left, inner, preds, s)
	case s.kind == subIn && len(s.lhs) > 1:
		return nil, nil, errorAt(s.pos, ErrUnsupported, "A multi-column %s used as a value (not a WHERE or HAVING conjunct) is not supported.", s)
	case !ok || inner == nil:
		// A non-equality correlation: the subquery's rows per distinct
		// outer value, joined back on those values.
		if inner, pairs, err = domainSubquery(left, s); err != nil {
			return nil, nil, err
		}
	}
	// Group the subquery by its correlation keys (and, for IN, its
	// value): at most one row per left row.
	keys := make([]NamedExpr, 0, len(pairs)+1)
	for i, p := range pairs {
		keys = append(keys, NamedExpr{Name: "_corr" + itoa(i), Expr: p.inner})
	}
	corrConds := func(offset int) []Expr {
		out := make([]Expr, len(pairs))
		for i, p := range pairs {
			fn := "="
			if p.nullSafe {
				fn = "<=>"
			}
			out[i] = mustCall(fn, bindOuter(p.outer, s.outer, 0), &ColumnRef{Index: offset + i, Name: keys[i].Name, Type: p.inner.DataType(), Null: p.inner.Nullable()})
		}
		return out
	}
	if s.kind == subExists {
		src := inner
		if len(pairs) == 0 {
			src = &Limit{Input: inner, N: 1}
		}
		agg, err := NewAggregate(src, keys, []AggregateExpr{countStarAgg("_count")})
		if err != nil {
			return nil, nil, err
		}
		j, err := NewJoin(left, agg, LeftOuterJoin, conjoin(corrConds(nl)))
		if err != nil {
			return nil, nil, err
		}
		cnt := ColumnOf(j.Schema(), nl+len(pairs))
		if len(pairs) == 0 {
			return j, mustCall(">", cnt, &Literal{Value: int64(0), Type: vector.Int64}), nil
		}
		return j, mustCall("isnotnull", cnt), nil
	}
	// x IN (query): true on a match; otherwise NULL when x is NULL or the
	// (correlated group of the) subquery has a NULL, unless it is empty.
	y := ColumnOf(inner.Schema(), 0)
	k1 := append(append([]NamedExpr(nil), keys...), NamedExpr{Name: "_value", Expr: y})
	a1, err := NewAggregate(inner, k1, []AggregateExpr{countStarAgg("_match")})
	if err != nil {
		return nil, nil, err
	}
	eq, err := inEquality(s.pos, s.lhs[0], ColumnOf(a1.Schema(), len(pairs)).withIndex(nl+len(pairs)))
	if err != nil {
		return nil, nil, err
	}
	j1, err := NewJoin(left, a1, LeftOuterJoin, conjoin(append(corrConds(nl), eq)))
	if err != nil {
		return nil, nil, err
	}
	match := ColumnOf(j1.Schema(), nl+len(pairs)+1)
	nl2 := j1.Schema().NumFields()
	a2, err := NewAggregate(inner, keys, []AggregateExpr{countStarAgg("_rows"),
		{Func: vector.AggCount, Args: []Expr{y}, Name: "_values", Type: vector.Int64}})
	if err != nil {
		return nil, nil, err
	}
	j2, err := NewJoin(j1, a2, LeftOuterJoin, conjoin(corrConds(nl2)))
	if err != nil {
		return nil, nil, err
	}
	rows := ColumnOf(j2.Schema(), nl2+len(pairs))
	vals := ColumnOf(j2.Schema(), nl2+len(pairs)+1)
	zero := &Literal{Value: int64(0), Type: vector.Int64}
	v := &Case{Type: vector.Boolean, Whens: []When{
		{Cond: mustCall("isnotnull", match), Then: litTrue},
		{Cond: mustCall("isnull", rows), Then: litFalse},
		{Cond: mustCall("=", rows, zero), Then: litFalse},
		{Cond: mustCall("or", mustCall("isnull", s.lhs[0]), mustCall(">", rows, vals)), Then: litNullB},
	}, Else: litFalse}
	return j2, v, nil
}

// isCorrelationErr reports whether err is decorrelate's refusal of an
// outer reference it cannot pull up (which a domain join may take).
func isCorrelationErr(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.Contains(e.Msg, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_REFERENCE]")
}

func (c *ColumnRef) withIndex(i int) *ColumnRef {
	out := *c
	out.Index = i
	return &out
}

func itoa(i int) string { return strconv.Itoa(i) }

// scalarUncorrelated joins the one-row aggregate count(*), first(value)
// of the subquery to every left row; more than one row raises
// SCALAR_SUBQUERY_TOO_MANY_ROWS when the value is computed.
func scalarUncorrelated(left, inner Node) (Node, Expr, error) {
	col := ColumnOf(inner.Schema(), 0)
	first := AggregateExpr{Func: vector.AggFirst, Args: []Expr{col}, Name: "_value"}
	t, err := aggResultType(&first)
	if err != nil {
		return nil, nil, err
	}
	first.Type = t
	agg, err := NewAggregate(inner, nil, []AggregateExpr{countStarAgg("_count"), first})
	if err != nil {
		return nil, nil, err
	}
	j, err := NewJoin(left, agg, LeftOuterJoin, nil)
	if err != nil {
		return nil, nil, err
	}
	nl := left.Schema().NumFields()
	val := ColumnOf(j.Schema(), nl+1)
	return j, &Call{Func: scalarSubqueryCheck, Args: []Expr{ColumnOf(j.Schema(), nl), val}, Type: val.Type, Null: true}, nil
}

// scalarSubqueryCheck is the internal function that raises
// SCALAR_SUBQUERY_TOO_MANY_ROWS (see vector.ScalarSubqueryCheck).
const scalarSubqueryCheck = "scalar_subquery_check"

// scalarCorrelated left-outer-joins an aggregated correlated scalar
// subquery on its correlation keys. A left row without a group gets the
// aggregate's value over no rows (count is 0, not NULL: the "count bug").
func scalarCorrelated(left, inner Node, preds []Expr, s *subqueryExpr) (Node, Expr, error) {
	exprs := identityExprs(inner.Schema(), inner.Schema().NumFields())
	exprs = append(exprs, NamedExpr{Name: "_present", Expr: litTrue})
	right, err := NewProject(inner, exprs)
	if err != nil {
		return nil, nil, err
	}
	nl := left.Schema().NumFields()
	conds := make([]Expr, len(preds))
	for i, p := range preds {
		conds[i] = bindOuter(p, s.outer, nl)
	}
	j, err := NewJoin(left, right, LeftOuterJoin, conjoin(conds))
	if err != nil {
		return nil, nil, err
	}
	val := ColumnOf(j.Schema(), nl)
	def, err := emptyValue(s.plan, s.pos)
	if err != nil {
		return nil, nil, err
	}
	if def.Value == nil {
		return j, val, nil
	}
	present := ColumnOf(j.Schema(), j.Schema().NumFields()-1)
	return j, &Case{Type: val.Type, Whens: []When{{Cond: mustCall("isnull", present), Then: castTo(def, val.Type)}}, Else: val}, nil
}

// emptyValue is the value of a correlated scalar subquery for a key with
// no rows: its global aggregate over no rows (count 0, other aggregates
// NULL) through the projections above it; NULL when it groups.
func emptyValue(n Node, pos sql.Pos) (*Literal, error) {
	null := &Literal{Type: n.Schema().Field(0).Type}
	var exprs []Expr // the output column as an expression over the current node
	e := Expr(ColumnOf(n.Schema(), 0))
	for {
		switch x := n.(type) {
		case *SubqueryAlias:
			n = x.Input
			continue
		case *Sort:
			n = x.Input
			continue
		case *Filter:
			n = x.Input
			exprs = append(exprs, x.Cond)
			continue
		case *Project:
			e, _ = Transform(e, func(y Expr) (Expr, error) {
				if c, ok := y.(*ColumnRef); ok {
					return x.Exprs[c.Index].Expr, nil
				}
				return y, nil
			})
			n = x.Input
			continue
		case *Aggregate:
			if len(x.GroupBy) > 0 {
				return null, nil
			}
			v, err := Transform(e, func(y Expr) (Expr, error) {
				c, ok := y.(*ColumnRef)
				if !ok {
					return y, nil
				}
				a := x.Aggs[c.Index]
				if a.Func == vector.AggCount || a.Func == vector.AggCountStar {
					return &Literal{Value: int64(0), Type: vector.Int64}, nil
				}
				return &Literal{Type: a.Type}, nil
			})
			if err != nil {
				return nil, err
			}
			l, err := foldConstant(v)
			if err != nil {
				return nil, errorAt(pos, ErrUnsupported, "The value of this correlated scalar subquery over no rows cannot be computed: %v.", err)
			}
			if l.Value != nil && len(exprs) > 0 {
				return nil, errorAt(pos, ErrUnsupported, "A correlated scalar subquery with HAVING whose value over no rows is not NULL is not supported.")
			}
			return l, nil
		}
		return null, nil
	}
}

// projectSubqueries joins the subqueries of a select list's expressions
// to *node and rewrites exprs over the joined node in place (the Project
// built over it drops the joined columns).
func projectSubqueries(node *Node, exprs []NamedExpr) error {
	es := make([]Expr, len(exprs))
	for i, e := range exprs {
		es[i] = e.Expr
	}
	if !anySubquery(es) {
		return nil
	}
	n, out, err := planSubqueries(*node, es)
	if err != nil {
		return err
	}
	for i := range exprs {
		exprs[i].Expr = out[i]
	}
	*node = n
	return nil
}

// aggregateSubqueries joins the subqueries in aggregate arguments (such as
// FILTER (WHERE x IN (SELECT ...))) and in grouping keys (GROUP BY EXISTS
// (SELECT ...)) to the aggregate's input, rewriting aggs in place; it
// returns the keys over the joined input (a copy when any changed).
func aggregateSubqueries(input Node, keys []NamedExpr, aggs []AggregateExpr) (Node, []NamedExpr, error) {
	var es []Expr
	for _, k := range keys {
		es = append(es, k.Expr)
	}
	for _, a := range aggs {
		es = append(es, a.Args...)
	}
	if !anySubquery(es) {
		return input, keys, nil
	}
	n, out, err := planSubqueries(input, es)
	if err != nil {
		return nil, nil, err
	}
	newKeys := make([]NamedExpr, len(keys))
	for i, k := range keys {
		newKeys[i] = NamedExpr{Name: k.Name, Expr: out[i]}
	}
	k := len(keys)
	for i := range aggs {
		args := make([]Expr, len(aggs[i].Args))
		for j := range args {
			args[j] = out[k]
			k++
		}
		aggs[i].Args = args
	}
	return n, newKeys, nil
}
