package sql

// startsQuery reports whether t can begin a query.
func startsQuery(t *token) bool {
	return t.kind == tLParen || t.kind == tWord && (t.kw == "SELECT" || t.kw == "WITH" || t.kw == "VALUES")
}

// parseQuery parses [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET m]. A query
// that is only a parenthesized query is returned as that inner query, so
// redundant parentheses leave no trace in the tree.
func (p *parser) parseQuery() *Query {
	p.enter()
	defer p.leave()
	q := &Query{Pos: p.peek().pos}
	if p.isKw("WITH") {
		q.With = p.parseWith()
	}
	q.Body = p.parseUnion("SELECT, WITH or '('")
	if p.isKw("ORDER") {
		p.next()
		p.expectKw("BY", "BY after ORDER")
		for {
			q.OrderBy = append(q.OrderBy, p.parseOrderItem())
			if !p.accept(tComma) {
				break
			}
		}
	}
	p.parsePartitionClauses(q)
	if p.acceptKw("LIMIT") && !p.acceptKw("ALL") { // LIMIT ALL: no limit
		q.Limit = p.parseExprWhat("an expression after LIMIT")
	}
	// Spark's grammar: [LIMIT n] [OFFSET m], in that order only.
	if p.acceptKw("OFFSET") {
		q.Offset = p.parseExprWhat("an expression after OFFSET")
	}
	if t := p.peek(); t.kind == tWord && (t.kw == "UNION" || t.kw == "INTERSECT" || t.kw == "EXCEPT" || t.kw == "MINUS") {
		p.failAt(t.pos, "expected end of query after ORDER BY, LIMIT or OFFSET, found %s (put the query before %s in parentheses)", describe(*t), t.kw)
	}
	if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil && q.SortBy == nil && q.DistributeBy == nil {
		if inner, ok := q.Body.(*Query); ok {
			return inner
		}
	}
	return q
}

// parseWith parses WITH name [(cols)] [AS] (query), ....
func (p *parser) parseWith() []*CTE {
	p.next() // WITH
	var ctes []*CTE
	for {
		name := p.ident("a name for the common table expression")
		cte := &CTE{Pos: name.Pos, Name: name}
		if p.peek().kind == tLParen && !startsQuery(p.peekAt(1)) {
			cte.Columns = p.identList("for the column names")
		}
		p.acceptKw("AS")
		open := p.expect(tLParen, "AS and '(' before the query of common table expression '"+truncate(name.Name)+"'")
		if !startsQuery(p.peek()) {
			p.unexpected("a query after '('")
		}
		cte.Query = p.parseQuery()
		p.closeParen(open)
		ctes = append(ctes, cte)
		if !p.accept(tComma) {
			break
		}
	}
	if !startsQuery(p.peek()) || p.isKw("WITH") {
		p.unexpected("',' or a query after the common table expressions")
	}
	return ctes
}

// parseUnion parses term ((UNION | EXCEPT | MINUS) [ALL | DISTINCT] term)*,
// associating to the left; a term is primary (INTERSECT [ALL | DISTINCT]
// primary)*: INTERSECT binds tighter, as in Spark.
func (p *parser) parseUnion(what string) QueryBody {
	left := p.parseIntersect(what)
	for {
		t := p.peek()
		if t.kind != tWord {
			return left
		}
		var op SetOp
		switch t.kw {
		case "UNION":
			op = SetUnion
		case "EXCEPT", "MINUS":
			op = SetExcept
		default:
			return left
		}
		p.next()
		all := p.acceptKw("ALL")
		if !all {
			p.acceptKw("DISTINCT")
		}
		right := p.parseIntersect("SELECT or '(' after " + t.kw)
		left = &Union{Pos: left.Position(), Op: op, All: all, Left: left, Right: right}
	}
}

// parseIntersect parses primary (INTERSECT [ALL | DISTINCT] primary)*.
func (p *parser) parseIntersect(what string) QueryBody {
	left := p.parseQueryPrimary(what)
	for p.isKw("INTERSECT") {
		p.next()
		all := p.acceptKw("ALL")
		if !all {
			p.acceptKw("DISTINCT")
		}
		right := p.parseQueryPrimary("SELECT or '(' after INTERSECT")
		left = &Union{Pos: left.Position(), Op: SetIntersect, All: all, Left: left, Right: right}
	}
	return left
}

// parseQueryPrimary parses a SELECT block or a parenthesized query.
func (p *parser) parseQueryPrimary(what string) QueryBody {
	t := p.peek()
	switch {
	case t.kind == tWord && t.kw == "SELECT":
		return p.parseSelect()
	case t.kind == tWord && t.kw == "FROM":
		return p.parseFromFirst()
	case t.kind == tWord && t.kw == "VALUES":
		v := p.parseValues()
		if !p.isKw("AS") && !isAliasName(p.peek()) {
			return v
		}
		// VALUES ... [AS] t(a, b) as a query: SELECT * FROM the aliased rows.
		ref := &SubqueryRef{Pos: v.Pos, Query: &Query{Pos: v.Pos, Body: v}}
		ref.Alias = p.parseTableAlias()
		ref.Columns = p.parseColumnAliases(ref.Alias)
		return &Select{Pos: v.Pos, Items: []*SelectItem{{Pos: v.Pos, Expr: &Star{Pos: v.Pos}}}, From: []FromItem{ref}}
	case t.kind == tWord && t.kw == "TABLE":
		// TABLE name is SELECT * FROM name (Spark's queryPrimary).
		p.next()
		name := p.qualifiedName("a table name after TABLE")
		return &Select{Pos: t.pos, Items: []*SelectItem{{Pos: t.pos, Expr: &Star{Pos: t.pos}}}, From: []FromItem{&TableRef{Pos: name[0].Pos, Name: name}}}
	case t.kind == tLParen:
		open := p.next()
		if !startsQuery(p.peek()) {
			p.unexpected("a query after '('")
		}
		q := p.parseQuery()
		p.closeParen(open)
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil && q.SortBy == nil && q.DistributeBy == nil {
			return q.Body
		}
		return q
	}
	p.unexpected(what)
	return nil
}

// selectFollows reports whether t may follow a select list.
func selectFollows(t *token) bool {
	switch t.kind {
	case tEOF, tSemi, tRParen:
		return true
	case tWord:
		switch t.kw {
		case "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "UNION", "INTERSECT", "EXCEPT", "MINUS", "QUALIFY", "WINDOW":
			return true
		}
	}
	return false
}

// fromFollows reports whether t may follow a FROM clause.
func fromFollows(t *token) bool {
	// SELECT follows the FROM clause of the FROM-first form.
	return t.kind != tComma && (selectFollows(t) && !(t.kind == tWord && t.kw == "FROM") || t.kind == tWord && t.kw == "SELECT")
}

// parseFromFirst parses Spark's (Hive's) FROM-first form, FROM items
// SELECT ... [WHERE ...] [GROUP BY ...] [HAVING ...], as the same SELECT
// written the usual way. Spark unions several SELECT bodies after one FROM
// (a multi-insert form); only one is taken here, so a second is a syntax
// error rather than a guess.
func (p *parser) parseFromFirst() *Select {
	p.next() // FROM
	from := p.parseFrom()
	if !p.isKw("SELECT") {
		p.unexpected("SELECT after the FROM clause")
	}
	s := p.parseSelect()
	if s.From != nil {
		p.failAt(s.Pos, "a SELECT after a FROM clause cannot have its own FROM")
	}
	s.From = from
	return s
}

// parseSelect parses SELECT [DISTINCT | ALL] items [FROM ...] [WHERE ...]
// [GROUP BY ...] [HAVING ...].
func (p *parser) parseSelect() *Select {
	sel := p.next()
	s := &Select{Pos: sel.pos}
	if p.acceptKw("DISTINCT") {
		s.Distinct = true
	} else {
		p.acceptKw("ALL")
	}
	for {
		s.Items = append(s.Items, p.parseSelectItem())
		if !p.accept(tComma) {
			break
		}
	}
	if t := p.peek(); !selectFollows(t) && !p.partitionClauseFollows() {
		// A word taken as an alias without AS, followed by something that
		// cannot come next, is most likely a misspelt keyword (gg FORM t):
		// point at it rather than at what follows.
		if a := p.implicitAlias; a != nil && t.kind != tErr {
			p.failAt(a.pos, "expected FROM or ',' after select item, found %s", describe(*a))
		}
		p.unexpected("FROM or ',' after select item")
	}
	if p.acceptKw("FROM") {
		s.From = p.parseFrom()
	}
	if p.acceptKw("WHERE") {
		s.Where = p.parseExprWhat("an expression after WHERE")
	}
	if p.isKw("GROUP") {
		p.next()
		p.expectKw("BY", "BY after GROUP")
		p.parseGroupBy(s)
	}
	if p.acceptKw("HAVING") {
		s.Having = p.parseExprWhat("an expression after HAVING")
	}
	p.parseWindowClauses(s)
	return s
}

// parseSelectItem parses expr [[AS] alias], * or qualifier.*. It records
// an alias written without AS in p.implicitAlias for error messages.
func (p *parser) parseSelectItem() *SelectItem {
	p.implicitAlias = nil
	if star := p.tryStar(); star != nil {
		return &SelectItem{Pos: star.Pos, Expr: star}
	}
	e := p.parseExprWhat("a select item")
	it := &SelectItem{Pos: e.Position(), Expr: e}
	p.implicitAlias = nil // a subquery inside e may have set it
	if p.acceptKw("AS") {
		id := p.aliasAfterAS("an alias after AS")
		it.Alias = &id
	} else if isAliasName(p.peek()) && !p.windowClauseFollows() && !p.partitionClauseFollows() {
		t := p.next()
		id := identOf(t)
		it.Alias = &id
		p.implicitAlias = t
	} else if wordIs(p.peek(), "FROM") && wordIs(p.peekAt(1), "FROM") {
		// Spark reserves no keyword by default (ANSI's reserved words
		// need spark.sql.ansi.enforceReservedKeywords): in
		// "count(*) FROM FROM t" the first FROM names the column.
		id := identOf(p.next())
		it.Alias = &id
	}
	return it
}

// tryStar parses * or name(.name)*.* if that is what comes next.
func (p *parser) tryStar() *Star {
	t := p.peek()
	if t.kind == tStar {
		p.next()
		return &Star{Pos: t.pos}
	}
	if !isName(t) {
		return nil
	}
	i := 0
	for isAnyName(p.peekAt(i)) && p.peekAt(i+1).kind == tDot {
		i += 2
	}
	if i == 0 || p.peekAt(i).kind != tStar {
		return nil
	}
	s := &Star{Pos: t.pos}
	for j := 0; j < i; j += 2 {
		s.Qualifier = append(s.Qualifier, identOf(p.next()))
		p.next() // .
	}
	p.next() // *
	return s
}

// parseOrderItem parses expr [ASC | DESC] [NULLS FIRST | NULLS LAST].
func (p *parser) parseOrderItem() *OrderItem {
	e := p.parseExprWhat("an expression in ORDER BY")
	it := &OrderItem{Pos: e.Position(), Expr: e}
	if p.acceptKw("DESC") {
		it.Desc = true
	} else {
		p.acceptKw("ASC")
	}
	if p.acceptKw("NULLS") {
		switch {
		case p.acceptKw("FIRST"):
			it.Nulls = NullsFirst
		case p.acceptKw("LAST"):
			it.Nulls = NullsLast
		default:
			p.unexpected("FIRST or LAST after NULLS")
		}
	}
	return it
}

// parseValues parses VALUES row, ... where a row is (expr, ...) or a
// single expression.
func (p *parser) parseValues() *Values {
	v := &Values{Pos: p.next().pos}
	for {
		if open := p.peek(); open.kind == tLParen {
			p.next()
			var row []Expr
			for {
				row = append(row, p.parseExprWhat("a value of the VALUES row"))
				if !p.accept(tComma) {
					break
				}
			}
			p.closeParen(open)
			v.Rows = append(v.Rows, row)
		} else {
			v.Rows = append(v.Rows, []Expr{p.parseExprWhat("a row after VALUES")})
		}
		if !p.accept(tComma) {
			return v
		}
	}
}

// partitionClauseFollows reports whether SORT BY, DISTRIBUTE BY or
// CLUSTER BY comes next, where the word could otherwise be an alias.
func (p *parser) partitionClauseFollows() bool {
	return wordIs(p.peek(), "SORT", "DISTRIBUTE", "CLUSTER") && p.isKwAt(1, "BY")
}

// parsePartitionClauses parses Hive's [CLUSTER BY e, ...] [DISTRIBUTE BY
// e, ...] [SORT BY item, ...] after ORDER BY's place, in Spark's order.
// ORDER BY with any of them, and CLUSTER BY with the other two, are
// Spark's parse error.
func (p *parser) parsePartitionClauses(q *Query) {
	t := p.peek()
	exprs := func(what string) []Expr {
		var es []Expr
		for {
			es = append(es, p.parseExprWhat(what))
			if !p.accept(tComma) {
				return es
			}
		}
	}
	if wordIs(t, "CLUSTER") && p.isKwAt(1, "BY") {
		p.next()
		p.next()
		q.DistributeBy = exprs("an expression after CLUSTER BY")
		q.Cluster = true
		for _, e := range q.DistributeBy {
			q.SortBy = append(q.SortBy, &OrderItem{Pos: e.Position(), Expr: e})
		}
	}
	if u := p.peek(); p.isKw("DISTRIBUTE") && p.isKwAt(1, "BY") {
		if q.Cluster {
			p.failAt(u.pos, "Combination of ORDER BY/SORT BY/DISTRIBUTE BY/CLUSTER BY is not supported")
		}
		p.next()
		p.next()
		q.DistributeBy = exprs("an expression after DISTRIBUTE BY")
	}
	if u := p.peek(); p.isKw("SORT") && p.isKwAt(1, "BY") {
		if q.Cluster {
			p.failAt(u.pos, "Combination of ORDER BY/SORT BY/DISTRIBUTE BY/CLUSTER BY is not supported")
		}
		p.next()
		p.expectKw("BY", "BY after SORT")
		for {
			q.SortBy = append(q.SortBy, p.parseOrderItem())
			if !p.accept(tComma) {
				break
			}
		}
	}
	if q.OrderBy != nil && (q.SortBy != nil || q.DistributeBy != nil) {
		p.failAt(t.pos, "Combination of ORDER BY/SORT BY/DISTRIBUTE BY/CLUSTER BY is not supported")
	}
}
