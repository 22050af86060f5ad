package sql

// parseFrom parses the comma-separated items of a FROM clause.
func (p *parser) parseFrom() []FromItem {
	var items []FromItem
	what := "a table, STREAM or subquery after FROM"
	for {
		items = append(items, p.parseJoins(what))
		if !p.accept(tComma) {
			break
		}
		what = "a table, STREAM or subquery after ','"
	}
	items = p.parseLateralViews(items)
	if wordIs(p.peek(), "PIVOT") && p.peekAt(1).kind == tLParen {
		items = []FromItem{p.parsePivot(items)}
	} else if wordIs(p.peek(), "UNPIVOT") && (p.peekAt(1).kind == tLParen || wordIs(p.peekAt(1), "INCLUDE", "EXCLUDE")) {
		items = []FromItem{p.parseUnpivot(items)}
	}
	if t := p.peek(); !fromFollows(t) && !p.partitionClauseFollows() {
		const msg = "a join, ',', WHERE, GROUP BY, HAVING, ORDER BY, LIMIT or UNION after FROM item"
		if a := p.implicitAlias; a != nil && t.kind != tErr {
			// As in the select list: an alias without AS followed by
			// nonsense is most likely a misspelt keyword (FROM t WHER ...).
			p.failAt(a.pos, "expected %s, found %s", msg, describe(*a))
		}
		p.unexpected(msg)
	}
	return items
}

// parseJoins parses item (join item [ON cond | USING (cols)])*,
// associating to the left.
func (p *parser) parseJoins(what string) FromItem {
	left := p.parseFromPrimary(what)
	for {
		natural := p.acceptKw("NATURAL")
		kind, kwText, ok := p.parseJoinKind()
		if !ok {
			if natural {
				p.unexpected("JOIN after NATURAL")
			}
			return left
		}
		if natural {
			if kind == JoinCross || kind == JoinSemi || kind == JoinAnti {
				p.failAt(left.Position(), "NATURAL %s is not supported; NATURAL goes with INNER, LEFT, RIGHT or FULL joins", kwText)
			}
			kwText = "NATURAL " + kwText
		}
		right := p.parseFromPrimary("a table, STREAM or subquery after " + kwText)
		j := &Join{Pos: left.Position(), Kind: kind, Natural: natural, Left: left, Right: right}
		lateral := isLateral(right)
		if lateral && kind != JoinInner && kind != JoinCross && kind != JoinLeft {
			p.failAt(left.Position(), "[UNSUPPORTED_FEATURE.LATERAL_JOIN_OF_TYPE] The feature is not supported: %s with LATERAL correlation (only INNER, CROSS and LEFT OUTER joins may be LATERAL).", kwText)
		}
		if natural {
			if lateral {
				p.failAt(left.Position(), "[UNSUPPORTED_FEATURE.LATERAL_NATURAL_JOIN] The feature is not supported: NATURAL join with LATERAL correlation.")
			}
			left = j
			continue
		}
		switch {
		case p.acceptKw("ON"):
			j.On = p.parseExprWhat("a join condition after ON")
			p.implicitAlias = nil
		case p.isKw("USING"):
			if lateral {
				p.failAt(left.Position(), "[UNSUPPORTED_FEATURE.LATERAL_JOIN_USING] The feature is not supported: JOIN USING with LATERAL correlation.")
			}
			p.next()
			j.Using = p.identList("after USING")
			p.implicitAlias = nil
		}
		left = j
	}
}

// parseJoinKind consumes the keywords of a join up to and including JOIN.
// It returns the kind, the keywords as written (for messages) and whether
// a join was there at all.
func (p *parser) parseJoinKind() (JoinKind, string, bool) {
	t := p.peek()
	if t.kind != tWord {
		return 0, "", false
	}
	var kind JoinKind
	switch t.kw {
	case "JOIN":
		p.next()
		return JoinInner, "JOIN", true
	case "INNER":
		kind = JoinInner
	case "CROSS":
		kind = JoinCross
	case "SEMI":
		kind = JoinSemi
	case "ANTI":
		kind = JoinAnti
	case "LEFT":
		kind = JoinLeft
	case "RIGHT":
		kind = JoinRight
	case "FULL":
		kind = JoinFull
	default:
		return 0, "", false
	}
	text := p.next().kw
	// An optional second word: OUTER after LEFT, RIGHT or FULL; SEMI or
	// ANTI after LEFT.
	second := true
	switch {
	case p.isKw("OUTER") && (kind == JoinLeft || kind == JoinRight || kind == JoinFull):
	case p.isKw("SEMI") && kind == JoinLeft:
		kind = JoinSemi
	case p.isKw("ANTI") && kind == JoinLeft:
		kind = JoinAnti
	default:
		second = false
	}
	if second {
		text += " " + p.next().kw
	}
	p.expectKw("JOIN", "JOIN after "+text)
	return kind, text + " JOIN", true
}

// parseFromPrimary parses one FROM item without joins: a table (with an
// optional VERSION AS OF), STREAM name, STREAM(name), a table-valued
// function call or a parenthesized subquery, each followed by an optional
// watermark clause and alias.
func (p *parser) parseFromPrimary(what string) FromItem {
	p.enter()
	defer p.leave()
	t := p.peek()
	if wordIs(t, "LATERAL") && !wordIs(p.peekAt(1), "VIEW") {
		return p.parseLateralSubquery()
	}
	switch {
	case t.kind == tLParen:
		if !parenStartsQuery(p) {
			return p.parseParenJoin()
		}
		open := p.next()
		q := p.parseQuery()
		p.closeParen(open)
		ref := &SubqueryRef{Pos: open.pos, Query: q}
		ref.Watermark = p.parseWatermark()
		ref.Alias = p.parseTableAlias()
		ref.Columns = p.parseColumnAliases(ref.Alias)
		return ref
	case t.kind == tWord && t.kw == "VALUES" && (p.peekAt(1).kind == tLParen || canStartExpr(p.peekAt(1))):
		v := p.parseValues()
		ref := &SubqueryRef{Pos: v.Pos, Query: &Query{Pos: v.Pos, Body: v}}
		ref.Alias = p.parseTableAlias()
		ref.Columns = p.parseColumnAliases(ref.Alias)
		return ref
	case t.kind == tWord && t.kw == "STREAM" && (p.peekAt(1).kind == tLParen || isAliasName(p.peekAt(1))):
		// STREAM is a keyword only when a name or '(' follows, so that a
		// table called stream can still be read.
		p.next()
		ref := &TableRef{Pos: t.pos, Stream: true}
		if open := p.peek(); open.kind == tLParen {
			p.next()
			ref.Name = p.qualifiedName("a table name after STREAM(")
			p.closeParen(open)
		} else {
			ref.Name = p.qualifiedName("a table name after STREAM")
		}
		ref.Watermark = p.parseWatermark()
		ref.Alias = p.parseTableAlias()
		return ref
	case isName(t):
		name := p.qualifiedName(what)
		if open := p.peek(); open.kind == tLParen {
			if len(name) > 1 {
				p.failAt(name[0].Pos, "table-valued function names cannot be qualified")
			}
			tf := &TableFunc{Pos: t.pos, Name: name[0], Args: p.parseCallArgs(open)}
			tf.Watermark = p.parseWatermark()
			tf.Alias = p.parseTableAlias()
			tf.Columns = p.parseColumnAliases(tf.Alias)
			return tf
		}
		ref := &TableRef{Pos: t.pos, Name: name}
		ref.Version = p.parseVersion()
		ref.Watermark = p.parseWatermark()
		ref.Alias = p.parseTableAlias()
		ref.Columns = p.parseColumnAliases(ref.Alias)
		return ref
	}
	p.unexpected(what)
	return nil
}

// parseLateralSubquery parses LATERAL (query) [[AS] alias [(columns)]].
func (p *parser) parseLateralSubquery() FromItem {
	kw := p.next()
	open := p.peek()
	if open.kind != tLParen || !parenStartsQuery(p) {
		p.failAt(kw.pos, "LATERAL can only be used with a subquery: LATERAL (SELECT ...).")
	}
	p.next()
	q := p.parseQuery()
	p.closeParen(open)
	ref := &SubqueryRef{Pos: kw.pos, Lateral: true, Query: q}
	ref.Alias = p.parseTableAlias()
	ref.Columns = p.parseColumnAliases(ref.Alias)
	return ref
}

// isLateral reports whether a FROM item is a LATERAL subquery.
func isLateral(it FromItem) bool {
	s, ok := it.(*SubqueryRef)
	return ok && s.Lateral
}

// parseColumnAliases parses the column list of an alias, t(a, b), when
// one follows.
func (p *parser) parseColumnAliases(alias *Ident) []Ident {
	if alias == nil || p.peek().kind != tLParen {
		return nil
	}
	p.implicitAlias = nil
	return p.identList("before the column aliases")
}

// parseCallArgs parses (expr, ...) after a table-valued function name.
func (p *parser) parseCallArgs(open *token) []Expr {
	p.next() // (
	var args []Expr
	if p.accept(tRParen) {
		return args
	}
	for {
		args = append(args, p.parseExprWhat("a function argument"))
		if !p.accept(tComma) {
			break
		}
	}
	if p.peek().kind != tRParen {
		p.unexpected("',' or ')' after the function argument")
	}
	p.closeParen(open)
	return args
}

// parseVersion parses [FOR] VERSION AS OF n (or SYSTEM_VERSION) when it
// comes next.
func (p *parser) parseVersion() *Literal {
	k := 0
	if p.isKw("FOR") {
		k = 1
	}
	if !(p.isKwAt(k, "VERSION") || p.isKwAt(k, "SYSTEM_VERSION")) || !p.isKwAt(k+1, "AS") || !p.isKwAt(k+2, "OF") {
		return nil
	}
	for i := 0; i < k+3; i++ {
		p.next()
	}
	const what = "an epoch number or string after VERSION AS OF"
	t := p.peek()
	switch t.kind {
	case tNumber:
		lit := p.numberLit(t, t.pos, false)
		if lit.Kind != LitInt && lit.Kind != LitBigInt {
			p.unexpected(what)
		}
		p.next()
		return lit
	case tString:
		return &Literal{Pos: t.pos, Kind: LitString, Value: p.stringValue()}
	}
	p.unexpected(what)
	return nil
}

// parseWatermark parses WATERMARK expr [[AS] name] DELAY OF interval when
// it comes next. WATERMARK is a keyword only when an expression follows,
// so that it can still be an alias.
func (p *parser) parseWatermark() *Watermark {
	if !p.isKw("WATERMARK") || !canStartExpr(p.peekAt(1)) {
		return nil
	}
	w := &Watermark{Pos: p.next().pos}
	w.Expr = p.parseExprWhat("an expression after WATERMARK")
	after := "the watermark expression"
	if p.acceptKw("AS") {
		id := p.aliasAfterAS("a column name after AS")
		w.Name = &id
		after = "the watermark column name"
	} else if isAliasName(p.peek()) && !p.isKw("DELAY") && !p.isKw("OF") {
		id := identOf(p.next())
		w.Name = &id
		after = "the watermark column name"
	}
	p.expectKw("DELAY", "DELAY OF after "+after)
	p.expectKw("OF", "OF after DELAY")
	if !p.isKw("INTERVAL") {
		p.unexpected("INTERVAL after DELAY OF")
	}
	w.Delay = p.parseInterval()
	return w
}

// parseTableAlias parses [[AS] alias] after a FROM item, recording an
// alias written without AS in p.implicitAlias.
func (p *parser) parseTableAlias() *Ident {
	p.implicitAlias = nil
	var alias *Ident
	if p.acceptKw("AS") {
		id := p.aliasAfterAS("an alias after AS")
		alias = &id
	} else if t := p.peek(); isAliasName(t) && !(wordIs(t, "PIVOT", "UNPIVOT") && (p.peekAt(1).kind == tLParen || wordIs(p.peekAt(1), "INCLUDE", "EXCLUDE"))) && !p.windowClauseFollows() && !p.partitionClauseFollows() {
		id := identOf(p.next())
		alias = &id
		p.implicitAlias = t
	}
	if alias != nil && p.isKw("WATERMARK") && canStartExpr(p.peekAt(1)) {
		p.failAt(p.peek().pos, "the WATERMARK clause must come before the alias '%s'", truncate(alias.Name))
	}
	return alias
}
