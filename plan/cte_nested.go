package plan

import (
	"strings"

	"github.com/arrowstream/arrowstream/sql"
)

// checkNestedCTENames applies Spark's default
// spark.sql.legacy.ctePrecedencePolicy (EXCEPTION): a WITH that starts a
// CTE body or an expression subquery and redefines a name of an enclosing
// WITH is refused, because Spark before 3.0 resolved such a name to the
// outer definition and 3.0 on to the inner one; Spark raises rather than
// pick. Definitions in a FROM subquery (which Spark before 3.0 could not
// parse) are not checked, as in Spark. The engine resolves the inner
// definition (CORRECTED) wherever no error is raised.
func checkNestedCTENames(q *sql.Query) error {
	return cteNames(q, nil, true)
}

// cteNames checks the query q, with outer the CTE names defined around it
// and startOfQuery whether q begins a CTE body or expression subquery.
func cteNames(q *sql.Query, outer []string, startOfQuery bool) error {
	if q == nil {
		return nil
	}
	if len(q.With) == 0 {
		// A parenthesized query with nothing around it is the same plan
		// as the query inside; anything else is an operator around it.
		if inner, ok := q.Body.(*sql.Query); ok && len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil {
			return cteNames(inner, outer, startOfQuery)
		}
		return cteOther(q, outer)
	}
	names := append([]string(nil), outer...)
	for _, c := range q.With {
		if startOfQuery {
			for _, o := range outer {
				if strings.EqualFold(o, c.Name.Name) {
					return errorAt(c.Pos, ErrAmbiguous, "Name %s is ambiguous in nested CTE: it redefines a CTE of an enclosing WITH, which Spark's default spark.sql.legacy.ctePrecedencePolicy (EXCEPTION) refuses; rename the inner definition.", backquote(c.Name.Name))
				}
			}
		}
		if err := cteNames(c.Query, names, true); err != nil {
			return err
		}
		names = append(names, c.Name.Name)
	}
	rest := &sql.Query{Pos: q.Pos, Body: q.Body, OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset}
	return cteOther(rest, names)
}

// cteOther checks the parts of q (without its WITH): expression
// subqueries start a query, every other nested query (FROM subqueries,
// set operation operands) does not.
func cteOther(q *sql.Query, outer []string) error {
	var err error
	sql.Inspect(q, func(n sql.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *sql.Query:
			if x == q {
				return true
			}
			err = cteNames(x, outer, false)
			return false
		case *sql.Subquery:
			err = cteNames(x.Query, outer, true)
			return false
		case *sql.In:
			if x.Query != nil {
				sql.Inspect(x.X, func(m sql.Node) bool {
					if err != nil {
						return false
					}
					if s, ok := m.(*sql.Subquery); ok {
						err = cteNames(s.Query, outer, true)
						return false
					}
					return true
				})
				if err == nil {
					err = cteNames(x.Query, outer, true)
				}
				return false
			}
		}
		return true
	})
	return err
}
