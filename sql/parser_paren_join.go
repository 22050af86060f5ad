package sql

// Parenthesized joins: FROM ((a JOIN b ON ...) CROSS JOIN c) JOIN d ON ...
// The parentheses only group; the tree is the Join they enclose. What
// follows the run of '(' decides between a subquery and a relation: a
// query starts with SELECT, WITH or VALUES.

// parenStartsQuery reports whether the '(' at the current token opens a
// query (a subquery FROM item) rather than a parenthesized relation.
func parenStartsQuery(p *parser) bool {
	k := 0
	for p.peekAt(k).kind == tLParen {
		k++
	}
	t := p.peekAt(k)
	return t.kind == tWord && (t.kw == "SELECT" || t.kw == "WITH" || t.kw == "VALUES" || t.kw == "FROM")
}

// parseParenJoin parses '(' relation ')' at the current '('. An alias
// after the ')' is refused: it would name a join, which needs a subquery.
func (p *parser) parseParenJoin() FromItem {
	open := p.next()
	item := p.parseJoins("a table, STREAM, subquery or join after '('")
	p.closeParen(open)
	if t := p.peek(); wordIs(t, "AS") || isAliasName(t) {
		p.failAt(t.pos, "an alias after a parenthesized join is not supported; write (SELECT * FROM ...) %s", t.raw)
	}
	return item
}
