package sql

// This file parses the window-function syntax: IGNORE|RESPECT NULLS and
// OVER after a call, the WINDOW clause and QUALIFY.

// windowClauseFollows reports whether the current tokens start a WINDOW
// clause (WINDOW name AS), so that WINDOW is not taken as an alias there.
func (p *parser) windowClauseFollows() bool {
	return p.isKw("WINDOW") && isName(p.peekAt(1)) && p.isKwAt(2, "AS")
}

// parseCallSuffix parses [IGNORE NULLS | RESPECT NULLS] [OVER window]
// after a call's arguments and FILTER clause.
func (p *parser) parseCallSuffix(fc *FuncCall) {
	if (p.isKw("IGNORE") || p.isKw("RESPECT")) && p.isKwAt(1, "NULLS") {
		if p.next().kw == "IGNORE" {
			fc.Nulls = IgnoreNulls
		} else {
			fc.Nulls = RespectNulls
		}
		p.next() // NULLS
	}
	if p.isKw("OVER") && (p.peekAt(1).kind == tLParen || isName(p.peekAt(1))) {
		p.next()
		fc.Over = p.parseWindowSpec()
	}
}

// windowSpecKeyword reports whether the current token starts a part of a
// parenthesized window specification (rather than naming a base window).
func (p *parser) windowSpecKeyword() bool {
	t := p.peek()
	if t.kind != tWord {
		return false
	}
	switch t.kw {
	case "PARTITION", "DISTRIBUTE", "ORDER", "SORT":
		return p.isKwAt(1, "BY")
	case "ROWS", "RANGE":
		return true
	}
	return false
}

// parseWindowSpec parses name or ([name] [PARTITION BY ...] [ORDER BY
// ...] [frame]) after OVER or AS in a WINDOW clause.
func (p *parser) parseWindowSpec() *WindowSpec {
	t := p.peek()
	w := &WindowSpec{Pos: t.pos}
	if t.kind != tLParen {
		id := p.ident("a window name or '(' after OVER")
		w.Name, w.Bare = &id, true
		return w
	}
	open := p.next()
	if isName(p.peek()) && !p.windowSpecKeyword() {
		id := identOf(p.next())
		w.Name = &id
	}
	if (p.isKw("PARTITION") || p.isKw("DISTRIBUTE")) && p.isKwAt(1, "BY") {
		p.next()
		p.next()
		for {
			w.PartitionBy = append(w.PartitionBy, p.parseExprWhat("an expression in PARTITION BY"))
			if !p.accept(tComma) {
				break
			}
		}
	}
	if (p.isKw("ORDER") || p.isKw("SORT")) && p.isKwAt(1, "BY") {
		p.next()
		p.next()
		for {
			w.OrderBy = append(w.OrderBy, p.parseOrderItem())
			if !p.accept(tComma) {
				break
			}
		}
	}
	if p.isKw("ROWS") || p.isKw("RANGE") {
		w.Frame = p.parseFrame()
	}
	if p.peek().kind != tRParen {
		p.unexpected("PARTITION BY, ORDER BY, ROWS, RANGE or ')' in the window specification")
	}
	p.closeParen(open)
	return w
}

// parseFrame parses ROWS|RANGE bound or ROWS|RANGE BETWEEN bound AND bound.
func (p *parser) parseFrame() *WindowFrame {
	t := p.next()
	f := &WindowFrame{Pos: t.pos, Unit: FrameRows}
	if t.kw == "RANGE" {
		f.Unit = FrameRange
	}
	if p.acceptKw("BETWEEN") {
		f.HasBetween = true
		f.Start = p.parseFrameBound()
		p.expectKw("AND", "AND after the frame start")
		f.End = p.parseFrameBound()
		return f
	}
	f.Start = p.parseFrameBound()
	return f
}

// parseFrameBound parses UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW or
// expr PRECEDING|FOLLOWING.
func (p *parser) parseFrameBound() *FrameBound {
	t := p.peek()
	b := &FrameBound{Pos: t.pos}
	switch {
	case p.isKw("UNBOUNDED") && (p.isKwAt(1, "PRECEDING") || p.isKwAt(1, "FOLLOWING")):
		p.next()
		if p.next().kw == "PRECEDING" {
			b.Kind = UnboundedPreceding
		} else {
			b.Kind = UnboundedFollowing
		}
	case p.isKw("CURRENT") && p.isKwAt(1, "ROW"):
		p.next()
		p.next()
		b.Kind = CurrentRow
	default:
		b.Offset = p.parseExprWhat("UNBOUNDED, CURRENT ROW or an offset in the window frame")
		switch {
		case p.acceptKw("PRECEDING"):
			b.Kind = OffsetPreceding
		case p.acceptKw("FOLLOWING"):
			b.Kind = OffsetFollowing
		default:
			p.unexpected("PRECEDING or FOLLOWING after the frame offset")
		}
	}
	return b
}

// parseWindowClauses parses the WINDOW and QUALIFY clauses of a SELECT
// block (in either order, each at most once).
func (p *parser) parseWindowClauses(s *Select) {
	for {
		switch {
		case s.Windows == nil && p.windowClauseFollows():
			p.next()
			for {
				name := p.ident("a window name in the WINDOW clause")
				nw := &NamedWindow{Pos: name.Pos, Name: name}
				p.expectKw("AS", "AS after the window name")
				if p.peek().kind != tLParen && !isName(p.peek()) {
					p.unexpected("'(' or a window name after AS")
				}
				nw.Spec = p.parseWindowSpec()
				s.Windows = append(s.Windows, nw)
				if !p.accept(tComma) {
					break
				}
			}
		case s.Qualify == nil && p.isKw("QUALIFY"):
			p.next()
			s.Qualify = p.parseExprWhat("an expression after QUALIFY")
		default:
			return
		}
	}
}
