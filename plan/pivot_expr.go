package plan

import "github.com/arrowstream/arrowstream/sql"

// pivotAggregate rewrites one PIVOT aggregate expression for one pivot
// value: each aggregate call in it counts only the rows that cond (the
// pivot column <=> the value) admits, as Spark's ResolvePivot feeds each
// aggregate function's inputs through if(cond, x, NULL). The expression
// may compute over aggregates (udf(sum(x)), ceil(sum(x)) * 2), as Spark
// allows; bad is the first column read outside an aggregate (Spark's
// "did not appear in any aggregate function"), or e itself when e has no
// aggregate or a form this rewrite does not know.
func pivotAggregate(e, cond sql.Expr) (out sql.Expr, bad sql.Expr) {
	found := false
	var rw func(sql.Expr) (sql.Expr, sql.Expr)
	rw = func(x sql.Expr) (sql.Expr, sql.Expr) {
		switch v := x.(type) {
		case *sql.FuncCall:
			if IsAggregateFunction(v.Name.Name) && v.Over == nil {
				g := *v
				g.Filter = cond
				if v.Filter != nil {
					g.Filter = &sql.BinaryExpr{Pos: v.Filter.Position(), Op: sql.OpAnd, L: v.Filter, R: cond}
				}
				found = true
				return &g, nil
			}
			if v.Over != nil || v.Filter != nil {
				return nil, x
			}
			g := *v
			g.Args = make([]sql.Expr, len(v.Args))
			for i, a := range v.Args {
				r, bad := rw(a)
				if bad != nil {
					return nil, bad
				}
				g.Args[i] = r
			}
			return &g, nil
		case *sql.BinaryExpr:
			l, bad := rw(v.L)
			if bad != nil {
				return nil, bad
			}
			r, bad := rw(v.R)
			if bad != nil {
				return nil, bad
			}
			g := *v
			g.L, g.R = l, r
			return &g, nil
		case *sql.UnaryExpr:
			y, bad := rw(v.X)
			if bad != nil {
				return nil, bad
			}
			g := *v
			g.X = y
			return &g, nil
		case *sql.Cast:
			y, bad := rw(v.X)
			if bad != nil {
				return nil, bad
			}
			g := *v
			g.X = y
			return &g, nil
		case *sql.Literal, *sql.IntervalLit:
			return x, nil
		case *sql.ColumnRef:
			return nil, x
		}
		return nil, x
	}
	out, bad = rw(e)
	if bad == nil && !found {
		bad = e
	}
	return out, bad
}
