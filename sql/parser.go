package sql

import "fmt"

// Parse parses exactly one statement, optionally followed by ';'.
// It applies the default [Limits] (see ParseWith).
func Parse(src string) (Statement, error) {
	return ParseWith(src, Limits{})
}

// parseStatement parses a single statement without size limits (nesting
// is still bounded by MaxDepth).
func parseStatement(src string) (Statement, error) {
	return run(src, func(p *parser) Statement {
		s := p.parseStatement()
		p.accept(tSemi)
		p.expectEnd("end of input after the statement")
		return s
	})
}

// ParseScript parses statements separated by ';'. Empty statements (";;")
// and a trailing ';' are allowed; an empty script yields no statements.
func ParseScript(src string) ([]Statement, error) {
	return run(src, func(p *parser) []Statement {
		var stmts []Statement
		for {
			for p.accept(tSemi) {
			}
			if p.peek().kind == tEOF {
				return stmts
			}
			stmts = append(stmts, p.parseStatement())
			if !p.accept(tSemi) {
				p.expectEnd("';' or end of input after the statement")
				return stmts
			}
		}
	})
}

// ParseExpr parses a single expression, such as the expression strings of
// the DataFrame API ("value + 1", "window(ts, '10 seconds')").
func ParseExpr(src string) (Expr, error) {
	return run(src, func(p *parser) Expr {
		e := p.parseExpr()
		p.expectEnd("end of input after the expression")
		return e
	})
}

// ParseSelectItem parses one select-list item: expr [[AS] alias], * or
// t.*, as the DataFrame API's select and agg strings ("count(*) AS n").
func ParseSelectItem(src string) (*SelectItem, error) {
	return run(src, func(p *parser) *SelectItem {
		it := p.parseSelectItem()
		p.expectEnd("end of input after the select item")
		return it
	})
}

// ParseOrderItem parses one ORDER BY item: expr [ASC | DESC]
// [NULLS FIRST | NULLS LAST], as the DataFrame API's orderBy strings.
func ParseOrderItem(src string) (*OrderItem, error) {
	return run(src, func(p *parser) *OrderItem {
		it := p.parseOrderItem()
		p.expectEnd("end of input after the ORDER BY item")
		return it
	})
}

// ParseType parses a data type such as "BIGINT" or "DECIMAL(10, 2)".
func ParseType(src string) (*TypeName, error) {
	return run(src, func(p *parser) *TypeName {
		t := p.parseType()
		p.expectEnd("end of input after the type")
		return t
	})
}

// run lexes src and runs f, turning a bailout into the returned error.
func run[T any](src string, f func(p *parser) T) (res T, err error) {
	return runParser(&parser{toks: lex(src)}, f)
}

func runParser[T any](p *parser, f func(p *parser) T) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			var zero T
			res, err = zero, b.err
		}
	}()
	return f(p), nil
}

// parser is a recursive-descent parser over a fully lexed token slice.
// Grammar functions consume what they recognise and bail out (see bailout)
// at the first error.
type parser struct {
	toks  []token
	i     int
	depth int
	// implicitAlias is the alias token of the select item or FROM item
	// just parsed when it was written without AS, else nil; error messages
	// blame it when what follows makes no sense (it is likely a misspelt
	// keyword).
	implicitAlias *token
	// bind, when not nil, gives the expression a $n placeholder stands
	// for (ParseWithParams).
	bind Binder
	// lambdaVars are the parameters of the lambdas whose bodies are being
	// parsed: a reserved word that names one (transform(xs, all -> all))
	// is that variable in the body, as in Spark, where it is an
	// identifier there.
	lambdaVars []string
}

// peek returns the current token.
func (p *parser) peek() *token { return &p.toks[p.i] }

// peekAt returns the token k places ahead (0 is the current one), or the
// final token past the end. Lookahead may see the tEOF after a tErr, but
// the parser never consumes a tErr, so the lexical error is still what a
// failure at that point reports.
func (p *parser) peekAt(k int) *token {
	if i := p.i + k; i < len(p.toks) {
		return &p.toks[i]
	}
	return &p.toks[len(p.toks)-1]
}

// next consumes and returns the current token. It never moves past the end
// or past a lexical error, so that the error is what gets reported.
func (p *parser) next() *token {
	t := &p.toks[p.i]
	if t.kind != tEOF && t.kind != tErr {
		p.i++
	}
	return t
}

// accept consumes the current token if it has the given kind.
func (p *parser) accept(k tokKind) bool {
	if p.peek().kind == k {
		p.next()
		return true
	}
	return false
}

// expect consumes a token of kind k or fails with "expected WHAT".
func (p *parser) expect(k tokKind, what string) *token {
	if p.peek().kind != k {
		p.unexpected(what)
	}
	return p.next()
}

// isKw reports whether the current token is the keyword kw (upper case).
func (p *parser) isKw(kw string) bool {
	t := p.peek()
	return t.kind == tWord && t.kw == kw
}

// isKwAt reports whether the token k places ahead is the keyword kw.
func (p *parser) isKwAt(k int, kw string) bool {
	t := p.peekAt(k)
	return t.kind == tWord && t.kw == kw
}

// acceptKw consumes the keyword kw if it is the current token.
func (p *parser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.next()
		return true
	}
	return false
}

// expectKw consumes the keyword kw or fails with "expected WHAT".
func (p *parser) expectKw(kw, what string) *token {
	if !p.isKw(kw) {
		p.unexpected(what)
	}
	return p.next()
}

// expectEnd fails unless all input has been consumed.
func (p *parser) expectEnd(what string) {
	if p.peek().kind != tEOF {
		p.unexpected(what)
	}
}

// failAt stops parsing with an error at pos.
func (p *parser) failAt(pos Pos, format string, args ...any) {
	panic(bailout{&SyntaxError{Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}})
}

// unexpected stops parsing with "expected WHAT, found TOKEN" at the current
// token, or with the lexical error if the current token is one.
func (p *parser) unexpected(what string) {
	t := p.peek()
	if t.kind == tErr {
		panic(bailout{t.err})
	}
	p.failAt(t.pos, "expected %s, found %s", what, describe(*t))
}

// enter counts one level of nesting and fails past MaxDepth; leave undoes
// it. Every grammar function that can recurse without consuming a
// closing token calls them.
func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		p.failAt(p.peek().pos, "nesting too deep: more than %d levels", MaxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// isName reports whether t can be a name without backquotes: a quoted
// identifier or a word that is not reserved.
func isName(t *token) bool {
	return t.kind == tQuoted || t.kind == tWord && !isReserved(t.kw)
}

// isAnyName reports whether t can be a name where no keyword could stand
// (after AS or '.'): any word or quoted identifier.
func isAnyName(t *token) bool { return t.kind == tQuoted || t.kind == tWord }

// isAliasName reports whether t can be an alias written without AS.
func isAliasName(t *token) bool {
	return t.kind == tQuoted || t.kind == tWord && !isReserved(t.kw) && !notAlias[t.kw]
}

func identOf(t *token) Ident { return Ident{Pos: t.pos, Name: t.text, Quoted: t.kind == tQuoted} }

// ident consumes a name that is not a reserved word.
func (p *parser) ident(what string) Ident {
	if !isName(p.peek()) {
		p.unexpected(what)
	}
	return identOf(p.next())
}

// anyName consumes a name, allowing reserved words.
func (p *parser) anyName(what string) Ident {
	if !isAnyName(p.peek()) {
		p.unexpected(what)
	}
	return identOf(p.next())
}

// aliasAfterAS consumes the name after AS. Reserved words are accepted
// (AS makes them unambiguous) unless what follows shows that the alias is
// missing: in "SELECT a AS FROM t", FROM is not an alias.
func (p *parser) aliasAfterAS(what string) Ident {
	if t := p.peek(); t.kind == tWord && isReserved(t.kw) {
		switch n := p.peekAt(1); n.kind {
		case tEOF, tSemi, tComma, tRParen:
		case tWord:
			if !isReserved(n.kw) && !notAlias[n.kw] {
				p.unexpected(what)
			}
		default:
			p.unexpected(what)
		}
	}
	return p.anyName(what)
}

// qualifiedName consumes name(.name)*.
func (p *parser) qualifiedName(what string) []Ident {
	parts := []Ident{p.ident(what)}
	for p.peek().kind == tDot {
		p.next()
		parts = append(parts, p.anyName("a name after '.'"))
	}
	return parts
}

// identList consumes (name, ...).
func (p *parser) identList(what string) []Ident {
	open := p.expect(tLParen, "'(' "+what)
	var ids []Ident
	for {
		ids = append(ids, p.anyName("a column name"))
		if !p.accept(tComma) {
			break
		}
	}
	p.closeParen(open)
	return ids
}

// closeParen consumes the ')' matching open.
func (p *parser) closeParen(open *token) {
	if p.peek().kind != tRParen {
		p.unexpected(fmt.Sprintf("')' to close '(' at %s", open.pos))
	}
	p.next()
}

// canStartExpr reports whether t can begin an expression in a position
// where a clause keyword could also stand (after WATERMARK or DIV, say).
// Non-reserved words that start clauses (LIMIT) do not count.
func canStartExpr(t *token) bool {
	switch t.kind {
	case tQuoted, tString, tNumber, tBinary, tLParen, tMinus, tPlus, tTilde, tParam:
		return true
	case tWord:
		switch t.kw {
		case "NOT", "NULL", "TRUE", "FALSE", "CASE", "CAST", "CURRENT_DATE", "CURRENT_TIMESTAMP":
			return true
		}
		return !isReserved(t.kw) && !notAlias[t.kw]
	}
	return false
}
