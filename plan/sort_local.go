package plan

import "github.com/arrowstream/arrowstream/sql"

// markLocalSort marks the Sort that SORT BY's analysis put at the top of
// n (under the Project that drops the sort-only columns) as local.
func markLocalSort(n Node) {
	for {
		switch x := n.(type) {
		case *Sort:
			x.Local = true
			return
		case *Project:
			n = x.Input
		default:
			return
		}
	}
}

// distributeBy checks DISTRIBUTE BY's (and CLUSTER BY's) expressions
// against the query's output, as Spark resolves RepartitionByExpression
// over it. A repartition changes no rows and, with the engine's one
// partition, no order: nothing else is planned.
func (a *analyzer) distributeBy(sc *scope, exprs []sql.Expr) error {
	if len(exprs) == 0 {
		return nil
	}
	r := &resolver{b: a.b, sc: sc, clause: "DISTRIBUTE BY"}
	for _, e := range exprs {
		if _, err := r.expr(e); err != nil {
			return err
		}
	}
	return nil
}
