package sql

// WithinGroup is the WITHIN GROUP (ORDER BY x [ASC|DESC] [NULLS ...])
// clause of an ordered-set aggregate (percentile_cont, percentile_disc).
// The ordering expression x is the call's first argument.
type WithinGroup struct {
	Pos
	Desc  bool
	Nulls NullsOrder
}

// parseWithinGroup parses WITHIN GROUP (ORDER BY item) after a call's
// arguments: the item's expression becomes the first argument.
func (p *parser) parseWithinGroup(fc *FuncCall) {
	if !p.isKw("WITHIN") || !p.isKwAt(1, "GROUP") || p.peekAt(2).kind != tLParen {
		return
	}
	pos := p.next().pos
	p.next() // GROUP
	open := p.next()
	p.expectKw("ORDER", "ORDER BY after WITHIN GROUP (")
	p.expectKw("BY", "BY after WITHIN GROUP (ORDER")
	it := p.parseOrderItem()
	p.closeParen(open)
	fc.Within = &WithinGroup{Pos: pos, Desc: it.Desc, Nulls: it.Nulls}
	fc.Args = append([]Expr{it.Expr}, fc.Args...)
}

// withinGroupCall formats name(args) WITHIN GROUP (ORDER BY x) and the
// call's FILTER and OVER.
func (f *formatter) withinGroupCall(e *FuncCall) {
	f.funcName(e.Name)
	f.str("(")
	if e.Distinct {
		f.str("DISTINCT ")
	}
	f.exprList(e.Args[1:])
	f.str(") WITHIN GROUP (ORDER BY ")
	f.orderItem(&OrderItem{Expr: e.Args[0], Desc: e.Within.Desc, Nulls: e.Within.Nulls})
	f.str(")")
	if e.Filter != nil {
		f.str(" FILTER (WHERE ")
		f.expr(e.Filter, 0)
		f.str(")")
	}
	f.callSuffix(e)
}
