package sql

// Parenthesized joins: FROM ((a JOIN b ON ...) CROSS JOIN c) JOIN d ON ...
// The parentheses only group; the tree is the Join they enclose. What
// follows the run of '(' decides between a subquery and a relation: a
// query starts with SELECT, WITH or VALUES.

// parenStartsQuery reports whether the '(' at the current token opens a
// query (a subquery FROM item) rather than a parenthesized relation. In
// ((SELECT ...) s JOIN t ON ...) the inner '(' opens a subquery but the
// outer one a join: the outer '(' holds a query only when the inner
// parenthesized part is followed by what may continue a query (')', a set
// operation, ORDER BY, LIMIT), not by an alias or a join.
func parenStartsQuery(p *parser) bool {
	k := 0
	for p.peekAt(k).kind == tLParen {
		k++
	}
	t := p.peekAt(k)
	if !(t.kind == tWord && (t.kw == "SELECT" || t.kw == "WITH" || t.kw == "VALUES" || t.kw == "FROM")) {
		return false
	}
	if k == 1 {
		return true
	}
	// Find the ')' that closes the '(' at offset 1.
	depth := 0
	for j := 1; ; j++ {
		switch p.peekAt(j).kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
			if depth == 0 {
				after := p.peekAt(j + 1)
				return after.kind != tWord && after.kind != tQuoted && after.kind != tComma ||
					wordIs(after, "UNION", "EXCEPT", "MINUS", "INTERSECT", "ORDER", "SORT", "CLUSTER", "DISTRIBUTE", "LIMIT", "OFFSET", "WINDOW")
			}
		case tEOF, tErr:
			return true // unbalanced: the query parser reports it
		}
	}
}

// parseParenJoin parses '(' relation ')' [[AS] alias [(columns)]] at the
// current '('. With an alias the relation is named as a whole, as Spark's
// aliased relation: it reads as the subquery (SELECT * FROM relation)
// alias, whose columns are the relation's.
func (p *parser) parseParenJoin() FromItem {
	open := p.next()
	item := p.parseJoins("a table, STREAM, subquery or join after '('")
	p.closeParen(open)
	if t := p.peek(); !wordIs(t, "AS") && !isAliasName(t) {
		return item
	}
	sel := &Select{Pos: open.pos, Items: []*SelectItem{{Pos: open.pos, Expr: &Star{Pos: open.pos}}}, From: []FromItem{item}}
	ref := &SubqueryRef{Pos: open.pos, Query: &Query{Pos: open.pos, Body: sel}}
	ref.Alias = p.parseTableAlias()
	ref.Columns = p.parseColumnAliases(ref.Alias)
	return ref
}
