package plan

import (
	"strconv"

	"github.com/arrowstream/arrowstream/sql"
)

// exprHasOuter reports whether e references the enclosing query.
func exprHasOuter(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*outerRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// nodeExprs lists the expressions a node evaluates (for finding outer
// references).
func nodeExprs(n Node) []Expr {
	var out []Expr
	switch x := n.(type) {
	case *Filter:
		out = append(out, x.Cond)
	case *Project:
		for _, e := range x.Exprs {
			out = append(out, e.Expr)
		}
	case *Aggregate:
		for _, e := range x.GroupBy {
			out = append(out, e.Expr)
		}
		for _, a := range x.Aggs {
			out = append(out, a.Args...)
		}
	case *Join:
		if x.Cond != nil {
			out = append(out, x.Cond)
		}
	case *Sort:
		for _, k := range x.Keys {
			out = append(out, k.Expr)
		}
	case *WindowAssign:
		out = append(out, x.Time)
	case *Explode:
		out = append(out, x.Expr)
	}
	return out
}

// nodeHasOuter reports whether the plan n references the enclosing query.
func nodeHasOuter(n Node) bool {
	for _, e := range nodeExprs(n) {
		if exprHasOuter(e) {
			return true
		}
	}
	for _, c := range n.Children() {
		if nodeHasOuter(c) {
			return true
		}
	}
	return false
}

func errCorrelation(what string) error {
	return errorAt(sql.Pos{}, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_REFERENCE] Correlated subqueries are supported with outer references in WHERE or HAVING predicates only: %s.", what)
}

// decorrelate pulls the predicates of a subquery plan that reference the
// enclosing query (outerRefs) up out of the plan, as Spark's
// PullupCorrelatedPredicates: it returns the plan without them, the
// predicates over outerRefs and the returned plan's columns (which the
// plan keeps available by passing them through projections and adding
// them to the grouping of an aggregate, which then has one row per
// correlation key: grouped).
func decorrelate(n Node) (Node, []Expr, bool, error) {
	if !nodeHasOuter(n) {
		return n, nil, false, nil
	}
	switch x := n.(type) {
	case *Filter:
		in, preds, grouped, err := decorrelate(x.Input)
		if err != nil {
			return nil, nil, false, err
		}
		var keep []Expr
		for _, c := range splitConjuncts(x.Cond) {
			if exprHasOuter(c) {
				preds = append(preds, c)
			} else {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return in, preds, grouped, nil
		}
		f, err := NewFilter(in, conjoin(keep))
		return f, preds, grouped, err
	case *SubqueryAlias:
		in, preds, grouped, err := decorrelate(x.Input)
		if err != nil {
			return nil, nil, false, err
		}
		return &SubqueryAlias{Input: in, Alias: x.Alias}, preds, grouped, nil
	case *Sort:
		in, preds, grouped, err := decorrelate(x.Input)
		if err != nil {
			return nil, nil, false, err
		}
		for _, k := range x.Keys {
			if exprHasOuter(k.Expr) {
				return nil, nil, false, errCorrelation("an outer reference in ORDER BY")
			}
		}
		// The order of a subquery's rows does not matter without a LIMIT.
		return in, preds, grouped, nil
	case *Project:
		return decorrelateProject(x)
	case *Aggregate:
		return decorrelateAggregate(x)
	case *Limit:
		return nil, nil, false, errCorrelation("a correlated subquery with LIMIT")
	}
	return nil, nil, false, errCorrelation("an outer reference in " + operatorName(n))
}

func decorrelateProject(x *Project) (Node, []Expr, bool, error) {
	for _, e := range x.Exprs {
		if exprHasOuter(e.Expr) {
			return nil, nil, false, errCorrelation("an outer reference in the select list")
		}
	}
	in, preds, grouped, err := decorrelate(x.Input)
	if err != nil {
		return nil, nil, false, err
	}
	exprs := append([]NamedExpr(nil), x.Exprs...)
	at := map[int]int{}
	for _, p := range preds {
		for _, c := range Columns(p) {
			if _, ok := at[c]; !ok {
				at[c] = len(exprs)
				exprs = append(exprs, NamedExpr{Name: "_corr" + strconv.Itoa(len(exprs)), Expr: ColumnOf(in.Schema(), c)})
			}
		}
	}
	p, err := NewProject(in, exprs)
	if err != nil {
		return nil, nil, false, err
	}
	out := make([]Expr, len(preds))
	for i, pr := range preds {
		out[i], _ = Transform(pr, func(e Expr) (Expr, error) {
			if c, ok := e.(*ColumnRef); ok {
				return ColumnOf(p.Schema(), at[c.Index]), nil
			}
			return e, nil
		})
	}
	return p, out, grouped, nil
}

// corrPair is a correlated equality outer = inner.
type corrPair struct {
	outer, inner Expr
	nullSafe     bool
}

// equalityPairs splits correlated predicates into equalities between an
// expression of the enclosing query and one of the subquery.
func equalityPairs(preds []Expr) ([]corrPair, bool) {
	out := make([]corrPair, 0, len(preds))
	for _, p := range preds {
		c, ok := p.(*Call)
		if !ok || c.Func != "=" && c.Func != "<=>" || len(c.Args) != 2 {
			return nil, false
		}
		a, b := c.Args[0], c.Args[1]
		if !exprHasOuter(a) {
			a, b = b, a
		}
		if !exprHasOuter(a) || len(Columns(a)) > 0 || exprHasOuter(b) || len(Columns(b)) == 0 {
			return nil, false
		}
		out = append(out, corrPair{outer: a, inner: b, nullSafe: c.Func == "<=>"})
	}
	return out, true
}

func decorrelateAggregate(x *Aggregate) (Node, []Expr, bool, error) {
	for _, e := range nodeExprs(x) {
		if exprHasOuter(e) {
			return nil, nil, false, errCorrelation("an outer reference in an aggregate or grouping expression")
		}
	}
	in, preds, _, err := decorrelate(x.Input)
	if err != nil {
		return nil, nil, false, err
	}
	pairs, ok := equalityPairs(preds)
	for _, p := range pairs {
		ok = ok && pullsUpOverAggregate(p.inner)
	}
	if !ok {
		return nil, nil, false, errorAt(sql.Pos{}, ErrUnsupported, "[UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_COLUMN_IS_NOT_ALLOWED_IN_PREDICATE] Correlated column is not allowed in a non-equality predicate below an aggregate.")
	}
	keys := append([]NamedExpr(nil), x.GroupBy...)
	nk, na := len(x.GroupBy), len(x.Aggs)
	idx := map[string]int{}
	var extra []int // pair -> extra key ordinal
	for _, p := range pairs {
		k := exprKey(p.inner)
		i, ok := idx[k]
		if !ok {
			i = len(keys) - nk
			idx[k] = i
			keys = append(keys, NamedExpr{Name: "_corr" + strconv.Itoa(len(keys)), Expr: p.inner})
		}
		extra = append(extra, i)
	}
	agg, err := NewAggregate(in, keys, x.Aggs)
	if err != nil {
		return nil, nil, false, err
	}
	ne := len(keys) - nk
	s := agg.Schema()
	exprs := make([]NamedExpr, 0, nk+na+ne)
	for i := 0; i < nk; i++ {
		exprs = append(exprs, NamedExpr{Name: s.Field(i).Name, Expr: ColumnOf(s, i)})
	}
	for j := 0; j < na; j++ {
		exprs = append(exprs, NamedExpr{Name: s.Field(nk + ne + j).Name, Expr: ColumnOf(s, nk+ne+j)})
	}
	for e := 0; e < ne; e++ {
		exprs = append(exprs, NamedExpr{Name: s.Field(nk + e).Name, Expr: ColumnOf(s, nk+e)})
	}
	p, err := NewProject(agg, exprs)
	if err != nil {
		return nil, nil, false, err
	}
	out := make([]Expr, len(pairs))
	for i, pr := range pairs {
		fn := "="
		if pr.nullSafe {
			fn = "<=>"
		}
		c, err := newCall(sql.Pos{}, fn, pr.outer, ColumnOf(p.Schema(), nk+na+extra[i]))
		if err != nil {
			return nil, nil, false, err
		}
		out[i] = c
	}
	return p, out, true, nil
}
