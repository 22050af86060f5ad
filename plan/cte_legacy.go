package plan

// spark.sql.legacy.ctePrecedencePolicy=LEGACY resolves a CTE name as Spark
// 2 substituted CTEs (CTESubstitution's legacy traversal): a WITH replaces
// the names it defines in its body, in the expression subqueries within
// it and in its own later definitions, but not inside the definitions of
// a WITH nested in it; the WITHs of one query (reached from the top
// through FROM items, not through an expression subquery or a CTE
// definition) are substituted innermost first, and a query reached
// through an expression subquery or a CTE definition only after the
// enclosing one. So, for a name:
//
//   - a WITH whose definitions hold the reference inside a nested
//     WITH's definition does not reach it (blocked);
//   - of the WITHs that reach it and define the name, the one in the
//     outermost region wins (a region starts at an expression subquery
//     or a CTE definition), and within a region the innermost.
//
// WITH t AS (SELECT 1) SELECT (WITH t AS (SELECT 2) SELECT * FROM t) is 1;
// WITH t AS (SELECT 1) SELECT * FROM (WITH t AS (SELECT 2) SELECT * FROM
// t) is 2; WITH t1 AS (SELECT 1), t2 AS (WITH t3 AS (SELECT * FROM t1)
// SELECT * FROM t3) SELECT * FROM t2 does not find t1, as in Spark.

// enterCTEBody starts the analysis of a definition of the innermost WITH:
// a new region, in which the WITHs around that one are blocked. The
// returned function restores the state.
func (a *analyzer) enterCTEBody() func() {
	region, blocked := a.region, a.cteBlocked
	a.region++
	a.cteBlocked = len(a.ctes) - 1
	return func() { a.region, a.cteBlocked = region, blocked }
}

// lookupCTELegacy finds the definition of the lower-cased name k that
// LEGACY substitution gives the reference being analyzed.
func (a *analyzer) lookupCTELegacy(k string) *cteDef {
	var best *cteDef
	bestRegion := 0
	for i := len(a.ctes) - 1; i >= a.cteBlocked && i >= 0; i-- {
		d, ok := a.ctes[i][k]
		if !ok {
			continue
		}
		if best == nil || a.cteRegion[i] < bestRegion {
			best, bestRegion = d, a.cteRegion[i]
		}
	}
	return best
}
