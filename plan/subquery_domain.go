package plan

import (
	"errors"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// A correlated subquery whose correlation cannot be pulled up as
// equalities (an outer reference in a scalar subquery's select list, a
// non-equality correlation of an EXISTS or IN used as a value, a scalar
// subquery that is not grouped by its correlation) is decorrelated with
// a domain join, as Spark's DecorrelateInnerQuery does:
//
//   - D, the domain, is the distinct values of the outer references over
//     the clause's input;
//   - the subquery becomes a plan whose rows are its rows for every row
//     of D, followed by D's columns (the decorrelated plan joined with D
//     on its pulled-up predicates, or lateralize when predicates cannot
//     be pulled up);
//   - that plan is grouped by D's columns as the equality-correlated
//     forms are grouped by their correlation keys, and joined back on the
//     outer values being equal or both NULL (<=>).
//
// What Spark's CheckAnalysis refuses is refused here first, with its
// error, so that the domain join never answers a query Spark rejects.

// domainSubquery returns the subquery's rows per domain row (its columns
// then the domain's) and the pairs that join them back to left.
func domainSubquery(left Node, s *subqueryExpr) (Node, []corrPair, error) {
	if left.IsStreaming() {
		return nil, nil, errorAt(s.pos, ErrStreaming, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_REFERENCE] This correlated subquery over a stream needs equality correlation: its decorrelation joins the distinct outer values, which a stream does not have.")
	}
	keys := make([]NamedExpr, len(s.outer))
	for i, e := range s.outer {
		keys[i] = NamedExpr{Name: "_domain" + strconv.Itoa(i), Expr: e}
	}
	dom, err := NewAggregate(left, keys, nil)
	if err != nil {
		return nil, nil, err
	}
	var rn Node
	inner, preds, grouped, derr := decorrelated(s)
	switch {
	case derr == nil && !grouped:
		m := inner.Schema().NumFields()
		conds := make([]Expr, len(preds))
		for i, p := range preds {
			conds[i] = withDomain(p, dom, m)
		}
		rn, err = NewJoin(inner, dom, InnerJoin, conjoin(conds))
	default:
		if err := checkDomainCorrelation(s.plan, s.kind == subScalar); err != nil {
			if derr != nil {
				return nil, nil, errAt(s.pos, derr)
			}
			return nil, nil, errAt(s.pos, err)
		}
		rn, err = lateralize(s.plan, dom)
		if err != nil {
			return nil, nil, errAt(s.pos, asCorrelationErr(err))
		}
	}
	if err != nil {
		return nil, nil, err
	}
	m := rn.Schema().NumFields() - len(keys)
	pairs := make([]corrPair, len(keys))
	for i := range keys {
		c := ColumnOf(rn.Schema(), m+i)
		pairs[i] = corrPair{outer: &outerRef{index: i, name: c.Name, typ: c.Type, null: c.Null}, inner: c, nullSafe: true}
	}
	return rn, pairs, nil
}

// asCorrelationErr words lateralize's refusals for a subquery expression.
func asCorrelationErr(err error) error {
	var e *Error
	if errors.As(err, &e) && strings.Contains(e.Msg, "A LATERAL subquery cannot reference the outer query in ") {
		what := strings.TrimSuffix(strings.SplitN(e.Msg, "A LATERAL subquery cannot reference the outer query in ", 2)[1], ".")
		return errCorrelation("an outer reference in " + what)
	}
	return err
}

// checkDomainCorrelation is Spark's checkCorrelationsInSubquery: outer
// references only in filters (and, in a scalar subquery, projections);
// none under an outer join's preserved-side partner, a full outer join
// or another operator off the correlation path; no aggregate above a
// correlated predicate other than an equality of a column.
func checkDomainCorrelation(n Node, scalar bool) error {
	_, err := checkCorrelationUp(n, scalar)
	return err
}

// checkCorrelationUp checks n bottom-up and reports whether a correlated
// predicate that cannot pass an aggregate is below it.
func checkCorrelationUp(n Node, scalar bool) (bool, error) {
	unsupported := false
	for _, c := range n.Children() {
		u, err := checkCorrelationUp(c, scalar)
		if err != nil {
			return false, err
		}
		unsupported = unsupported || u
	}
	hosts := false
	for _, e := range nodeExprs(n) {
		hosts = hosts || exprHasOuter(e)
	}
	outerOnlyIn := func(kids ...Node) error {
		for _, k := range kids {
			if nodeHasOuter(k) {
				return errCorrelation("an outer reference under " + operatorName(n))
			}
		}
		return nil
	}
	switch x := n.(type) {
	case *SubqueryAlias, *Values, *Range, *Scan:
	case *Filter:
		for _, c := range splitConjuncts(x.Cond) {
			if exprHasOuter(c) && !canPullUpOverAgg(c) {
				unsupported = true
			}
		}
	case *Project:
		if hosts && !scalar {
			return false, errCorrelation("an outer reference in the select list")
		}
	case *Sort:
		if hosts {
			return false, errCorrelation("an outer reference in ORDER BY")
		}
	case *Aggregate:
		if hosts {
			return false, errCorrelation("an outer reference in an aggregate or grouping expression")
		}
		if unsupported {
			return false, errorAt(sql.Pos{}, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_COLUMN_IS_NOT_ALLOWED_IN_PREDICATE] Correlated column is not allowed in a non-equality predicate below an aggregate.")
		}
	case *Join:
		if hosts {
			return false, errCorrelation("an outer reference in a join condition")
		}
		switch x.Type {
		case InnerJoin:
		case LeftOuterJoin, LeftSemiJoin, LeftAntiJoin:
			return unsupported, outerOnlyIn(x.Right)
		case RightOuterJoin:
			return unsupported, outerOnlyIn(x.Left)
		default:
			return unsupported, outerOnlyIn(x.Left, x.Right)
		}
	default:
		return unsupported, outerOnlyIn(n)
	}
	return unsupported, nil
}

// canPullUpOverAgg is Spark's DecorrelateInnerQuery.canPullUpOverAgg for
// a correlated conjunct: an equality of a column (or its up-cast) with an
// expression of only outer values.
func canPullUpOverAgg(c Expr) bool {
	if x, ok := c.(*Call); ok && (x.Func == "=" || x.Func == "<=>") && len(x.Args) == 2 {
		a, b := x.Args[0], x.Args[1]
		if pullsUpOverAggregate(a) && len(Columns(b)) == 0 {
			return true
		}
		if pullsUpOverAggregate(b) && len(Columns(a)) == 0 {
			return true
		}
	}
	return len(Columns(c)) == 0
}

// scalarAtMostOneRow is Spark's check of a correlated scalar subquery:
// below its projections and aliases an aggregate (or a filter over one,
// HAVING) with aggregate functions, or a plan of at most one row.
func scalarAtMostOneRow(n Node) bool {
	for {
		switch x := n.(type) {
		case *SubqueryAlias:
			n = x.Input
			continue
		case *Project:
			n = x.Input
			continue
		case *Filter:
			if a, ok := x.Input.(*Aggregate); ok {
				return len(a.Aggs) > 0 && len(a.GroupBy) == 0 || maxRowsOne(n)
			}
		case *Aggregate:
			return len(x.Aggs) > 0 && len(x.GroupBy) == 0 || maxRowsOne(n)
		}
		return maxRowsOne(n)
	}
}

// maxRowsOne reports whether n has at most one row, as Spark's maxRows.
func maxRowsOne(n Node) bool {
	switch x := n.(type) {
	case *Values:
		return len(x.Rows) <= 1
	case *Range:
		return x.N <= 1
	case *Aggregate:
		return len(x.GroupBy) == 0
	case *Limit:
		return x.N <= 1 || maxRowsOne(x.Input)
	case *SubqueryAlias, *Project, *Filter, *Sort:
		return maxRowsOne(n.Children()[0])
	case *Join:
		switch x.Type {
		case LeftSemiJoin, LeftAntiJoin:
			return maxRowsOne(x.Left)
		case InnerJoin, LeftOuterJoin, RightOuterJoin:
			return maxRowsOne(x.Left) && maxRowsOne(x.Right)
		}
	}
	return false
}

// scalarDomain is a correlated scalar subquery decorrelated with a domain
// join: at most one row per domain row (checked when the value is
// computed, as an uncorrelated scalar subquery is), NULL for a domain row
// without one.
func scalarDomain(left Node, s *subqueryExpr) (Node, Expr, error) {
	if !scalarAtMostOneRow(s.plan) {
		return nil, nil, errorAt(s.pos, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.MUST_AGGREGATE_CORRELATED_SCALAR_SUBQUERY] Correlated scalar subqueries must be aggregated to return at most one row.")
	}
	rn, pairs, err := domainSubquery(left, s)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]NamedExpr, len(pairs))
	for i, p := range pairs {
		keys[i] = NamedExpr{Name: "_corr" + itoa(i), Expr: p.inner}
	}
	col := ColumnOf(rn.Schema(), 0)
	first := AggregateExpr{Func: vector.AggFirst, Args: []Expr{col}, Name: "_value"}
	t, err := aggResultType(&first)
	if err != nil {
		return nil, nil, err
	}
	first.Type = t
	agg, err := NewAggregate(rn, keys, []AggregateExpr{countStarAgg("_count"), first})
	if err != nil {
		return nil, nil, err
	}
	nl := left.Schema().NumFields()
	conds := make([]Expr, len(pairs))
	for i, p := range pairs {
		conds[i] = mustCall("<=>", bindOuter(p.outer, s.outer, 0), ColumnOf(agg.Schema(), i).withIndex(nl+i))
	}
	j, err := NewJoin(left, agg, LeftOuterJoin, conjoin(conds))
	if err != nil {
		return nil, nil, err
	}
	val := ColumnOf(j.Schema(), nl+len(pairs)+1)
	return j, &Call{Func: scalarSubqueryCheck, Args: []Expr{ColumnOf(j.Schema(), nl+len(pairs)), val}, Type: val.Type, Null: true}, nil
}
