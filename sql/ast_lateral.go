package sql

// LateralView is Hive's input LATERAL VIEW [OUTER] f(args) table [AS]
// col, ...: the rows of Input, each joined with the rows the generator f
// makes of it. It applies to the whole FROM clause before it (comma items
// become one cross join), and views chain left to right. Columns nil
// keeps the generator's default column names.
type LateralView struct {
	Pos
	Input   FromItem
	Outer   bool
	Func    *FuncCall
	Table   Ident
	Columns []Ident
}

func (*LateralView) fromItemNode() {}

// parseLateralViews wraps the FROM items in every LATERAL VIEW that
// follows them.
func (p *parser) parseLateralViews(items []FromItem) []FromItem {
	for p.isKw("LATERAL") && wordIs(p.peekAt(1), "VIEW") {
		lat := p.next()
		p.next()
		input := items[0]
		for _, it := range items[1:] {
			input = &Join{Pos: input.Position(), Kind: JoinCross, Left: input, Right: it}
		}
		lv := &LateralView{Pos: lat.pos, Input: input, Outer: p.acceptKw("OUTER")}
		name := p.qualifiedName("a generator function after LATERAL VIEW")
		open := p.peek()
		if open.kind != tLParen {
			p.unexpected("'(' after the generator of LATERAL VIEW")
		}
		lv.Func = &FuncCall{Pos: name[0].Pos, Name: name[len(name)-1], Args: p.parseCallArgs(open)}
		if len(name) > 1 {
			p.failAt(name[0].Pos, "generator names cannot be qualified")
		}
		lv.Table = p.ident("a table alias after the generator of LATERAL VIEW")
		if p.acceptKw("AS") || isAliasName(p.peek()) && !p.isKw("LATERAL") {
			for {
				lv.Columns = append(lv.Columns, p.anyName("a column alias of LATERAL VIEW"))
				if !p.accept(tComma) {
					break
				}
			}
		}
		items = []FromItem{lv}
	}
	return items
}
