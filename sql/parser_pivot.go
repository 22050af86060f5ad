package sql

// Pivot is FROM items PIVOT (agg [AS alias], ... FOR column IN (value [AS
// alias], ...)): one row per distinct value of the other columns, one
// column per value (and aggregate) of the pivot column. FOR (a, b) IN
// ((v1, v2) [AS alias], ...) pivots on several columns: Column is then
// the tuple (a struct) and each value a tuple.
type Pivot struct {
	Pos
	Input  FromItem
	Aggs   []*SelectItem
	Column Expr // a column, or a tuple of columns
	Values []*SelectItem
}

// parsePivot parses the PIVOT clause after the FROM items.
func (p *parser) parsePivot(items []FromItem) FromItem {
	t := p.next()
	if len(items) != 1 {
		p.failAt(t.pos, "PIVOT over more than one FROM item is not supported; join them in a subquery")
	}
	open := p.next()
	pv := &Pivot{Pos: t.pos, Input: items[0]}
	for {
		pv.Aggs = append(pv.Aggs, p.pivotItem("an aggregate in PIVOT"))
		if !p.accept(tComma) {
			break
		}
	}
	p.expectKw("FOR", "FOR after the PIVOT aggregates")
	if p.peek().kind == tLParen {
		// FOR (a, b) IN ((1, 'x'), ...): as Spark's ResolvePivot, the
		// columns are one struct (a tuple) compared with struct values.
		open := p.next()
		var cols []Expr
		for {
			ct := p.peek()
			cols = append(cols, &ColumnRef{Pos: ct.pos, Parts: p.qualifiedName("a pivot column")})
			if !p.accept(tComma) {
				break
			}
		}
		p.closeParen(open)
		pv.Column = &FuncCall{Pos: open.pos, Name: Ident{Pos: open.pos, Name: "struct"}, Args: cols}
	} else {
		ct := p.peek()
		pv.Column = &ColumnRef{Pos: ct.pos, Parts: p.qualifiedName("a pivot column after FOR")}
	}
	p.expectKw("IN", "IN after the pivot column")
	in := p.next()
	if in.kind != tLParen {
		p.failAt(in.pos, "expected '(' after IN")
	}
	for {
		pv.Values = append(pv.Values, p.pivotItem("a pivot value"))
		if !p.accept(tComma) {
			break
		}
	}
	p.closeParen(in)
	p.closeParen(open)
	p.implicitAlias = nil
	return pv
}

// pivotItem parses expr [[AS] alias], where FOR ends the item.
func (p *parser) pivotItem(what string) *SelectItem {
	t := p.peek()
	it := &SelectItem{Pos: t.pos, Expr: p.parseExprWhat(what)}
	if p.acceptKw("AS") {
		id := p.aliasAfterAS("an alias after AS")
		it.Alias = &id
	} else if a := p.peek(); isAliasName(a) && !p.isKw("FOR") {
		id := identOf(p.next())
		it.Alias = &id
	}
	return it
}

// Unpivot is FROM items UNPIVOT [INCLUDE | EXCLUDE NULLS] (value FOR name
// IN (column [AS alias], ...)): one row per input row and column, the
// column's name (or alias) in name and its value in value.
type Unpivot struct {
	Pos
	Input        FromItem
	IncludeNulls bool
	Value, Name  Ident
	Columns      []*SelectItem // column references with optional aliases
}

// parseUnpivot parses the UNPIVOT clause after the FROM items.
func (p *parser) parseUnpivot(items []FromItem) FromItem {
	t := p.next()
	if len(items) != 1 {
		p.failAt(t.pos, "UNPIVOT over more than one FROM item is not supported; join them in a subquery")
	}
	u := &Unpivot{Pos: t.pos, Input: items[0]}
	if w := p.peek(); wordIs(w, "INCLUDE", "EXCLUDE") {
		p.next()
		u.IncludeNulls = wordIs(w, "INCLUDE")
		if n := p.next(); !wordIs(n, "NULLS") {
			p.failAt(n.pos, "expected NULLS after %s", w.text)
		}
	}
	open := p.next()
	if open.kind != tLParen {
		p.failAt(open.pos, "expected '(' after UNPIVOT")
	}
	if p.peek().kind == tLParen {
		p.failAt(p.peek().pos, "UNPIVOT into several value columns is not supported")
	}
	u.Value = p.ident("a value column name in UNPIVOT")
	p.expectKw("FOR", "FOR after the UNPIVOT value column")
	u.Name = p.ident("a name column after FOR")
	p.expectKw("IN", "IN after the UNPIVOT name column")
	in := p.next()
	if in.kind != tLParen {
		p.failAt(in.pos, "expected '(' after IN")
	}
	for {
		ct := p.peek()
		it := &SelectItem{Pos: ct.pos, Expr: &ColumnRef{Pos: ct.pos, Parts: p.qualifiedName("a column to unpivot")}}
		if p.acceptKw("AS") {
			id := p.aliasAfterAS("an alias after AS")
			it.Alias = &id
		} else if a := p.peek(); isAliasName(a) {
			id := identOf(p.next())
			it.Alias = &id
		}
		u.Columns = append(u.Columns, it)
		if !p.accept(tComma) {
			break
		}
	}
	p.closeParen(in)
	p.closeParen(open)
	p.implicitAlias = nil
	return u
}
