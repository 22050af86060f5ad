package sql

import "strings"

// Expression precedence follows Spark's grammar, from loosest to tightest:
//
//	OR
//	AND
//	NOT
//	predicates: IS [NOT] NULL, [NOT] IN, [NOT] BETWEEN, [NOT] LIKE/ILIKE/RLIKE
//	comparison: = == <> != < <= > >= <=>
//	|
//	^
//	&
//	+ - ||
//	* / % DIV
//	unary - + ~
//	postfix: .field, [index], ::type
//
// As in Spark, a predicate applies to a whole comparison (a = b IS NULL is
// (a = b) IS NULL), and the bounds of BETWEEN are comparisons, so that
// x BETWEEN 1 AND 2 AND y is (x BETWEEN 1 AND 2) AND y.

// parseExpr parses a full expression.
func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	return p.parseOr()
}

// parseExprWhat parses a full expression, failing with "expected WHAT" if
// none starts at the current token.
func (p *parser) parseExprWhat(what string) Expr {
	if !startsExpr(p.peek(), p.peekAt(1)) && !p.isLambdaVar(p.peek()) {
		p.unexpected(what)
	}
	return p.parseExpr()
}

// startsExpr reports whether t (followed by next) can begin an expression.
func startsExpr(t, next *token) bool {
	switch t.kind {
	case tQuoted, tString, tNumber, tBinary, tLParen, tMinus, tPlus, tTilde, tParam:
		return true
	case tWord:
		switch t.kw {
		case "NOT", "NULL", "TRUE", "FALSE", "CASE", "CAST", "CURRENT_DATE", "CURRENT_TIMESTAMP":
			return true
		case "LEFT", "RIGHT":
			return next.kind == tLParen
		case "GROUP", "ORDER":
			// Column names unless BY follows (see parsePrimary).
			return !(next.kind == tWord && next.kw == "BY")
		}
		return !isReserved(t.kw)
	}
	return false
}

// operand parses the right operand of the operator token op with next,
// failing with a message that names the operator if there is none.
func (p *parser) operand(op *token, next func() Expr) Expr {
	if !startsExpr(p.peek(), p.peekAt(1)) && !p.isLambdaVar(p.peek()) {
		p.unexpected("an expression after '" + truncate(op.raw) + "'")
	}
	return next()
}

func (p *parser) parseOr() Expr {
	x := p.parseAnd()
	for p.isKw("OR") {
		op := p.next()
		y := p.operand(op, p.parseAnd)
		x = &BinaryExpr{Pos: x.Position(), Op: OpOr, L: x, R: y}
	}
	return x
}

func (p *parser) parseAnd() Expr {
	x := p.parseNot()
	for p.isKw("AND") {
		op := p.next()
		y := p.operand(op, p.parseNot)
		x = &BinaryExpr{Pos: x.Position(), Op: OpAnd, L: x, R: y}
	}
	return x
}

func (p *parser) parseNot() Expr {
	if p.isKw("NOT") {
		op := p.next()
		p.enter()
		defer p.leave()
		return &UnaryExpr{Pos: op.pos, Op: OpNot, X: p.operand(op, p.parseNot)}
	}
	return p.parsePredicate()
}

// parsePredicate parses a comparison followed by any number of predicate
// suffixes (Spark allows one; chaining them is harmless and unambiguous).
func (p *parser) parsePredicate() Expr {
	x := p.parseComparison()
	for {
		not := p.isKw("NOT")
		k := 0
		if not {
			k = 1
		}
		t := p.peekAt(k)
		if t.kind != tWord {
			return x
		}
		switch t.kw {
		case "IS":
			if not {
				return x
			}
			p.next()
			n := p.acceptKw("NOT")
			if e, ok := p.parseIsCompare(x, n); ok {
				x = e
				continue
			}
			if wordIs(p.peek(), "UNKNOWN") {
				p.next()
				x = &IsNull{Pos: x.Position(), X: x, Not: n, Unknown: true}
				continue
			}
			p.expectKw("NULL", "NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS")
			x = &IsNull{Pos: x.Position(), X: x, Not: n}
		case "IN":
			p.skip(k + 1)
			x = p.parseIn(x, not)
		case "BETWEEN", "LIKE", "ILIKE", "RLIKE", "REGEXP":
			// These words are not reserved: without NOT they are operators
			// only when an operand follows (SELECT a like FROM t aliases a).
			if !not && !canStartExpr(p.peekAt(1)) && !p.likeQuantifierAt(1) {
				return x
			}
			p.skip(k + 1)
			if t.kw == "BETWEEN" {
				lo := p.operand(t, p.parseComparison)
				and := p.expectKw("AND", "AND after the lower bound of BETWEEN")
				hi := p.operand(and, p.parseComparison)
				x = &Between{Pos: x.Position(), X: x, Low: lo, High: hi, Not: not}
				continue
			}
			if (t.kw == "LIKE" || t.kw == "ILIKE") && p.likeQuantifierAt(0) {
				x = p.parseLikeQuantified(x, likeOps[t.kw], not)
				continue
			}
			l := &Like{Pos: x.Position(), Op: likeOps[t.kw], X: x, Not: not, Pattern: p.operand(t, p.parseComparison)}
			// ESCAPE is not reserved: it is the clause only before a string.
			if p.isKw("ESCAPE") && p.peekAt(1).kind == tString {
				s := p.skipTo(1)
				l.Escape = &Literal{Pos: s.pos, Kind: LitString, Value: p.stringValue()}
			}
			x = l
		default:
			return x
		}
	}
}

var likeOps = map[string]LikeOp{"LIKE": OpLike, "ILIKE": OpILike, "RLIKE": OpRLike, "REGEXP": OpRLike}

// skipTo consumes n tokens and returns the current token after them.
func (p *parser) skipTo(n int) *token {
	p.skip(n)
	return p.peek()
}

// skip consumes n tokens.
func (p *parser) skip(n int) {
	for ; n > 0; n-- {
		p.next()
	}
}

// parseIn parses the (list) or (query) after IN.
func (p *parser) parseIn(x Expr, not bool) Expr {
	open := p.expect(tLParen, "'(' after IN")
	e := &In{Pos: x.Position(), X: x, Not: not}
	if startsQuery(p.peek()) && p.peek().kind != tLParen {
		e.Query = p.parseQuery()
		p.closeParen(open)
		return e
	}
	for {
		e.List = append(e.List, p.parseExprWhat("an expression in the IN list"))
		if !p.accept(tComma) {
			break
		}
	}
	if p.peek().kind != tRParen {
		p.unexpected("',' or ')' in the IN list")
	}
	p.closeParen(open)
	return e
}

var comparisonOps = map[tokKind]BinaryOp{
	tEq: OpEq, tEqEq: OpEq, tNe: OpNe, tBangEq: OpNe, tLt: OpLt, tLe: OpLe,
	tGt: OpGt, tGe: OpGe, tNullSafeEq: OpNullSafeEq,
}

// binaryLevel parses one left-associative level of binary operators.
func (p *parser) binaryLevel(ops func(*token) (BinaryOp, bool), next func() Expr) Expr {
	x := next()
	for {
		op, ok := ops(p.peek())
		if !ok {
			return x
		}
		t := p.next()
		y := p.operand(t, next)
		x = &BinaryExpr{Pos: x.Position(), Op: op, L: x, R: y}
	}
}

func (p *parser) parseComparison() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) {
		op, ok := comparisonOps[t.kind]
		return op, ok
	}, p.parseBitOr)
}

func (p *parser) parseBitOr() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) { return OpBitOr, t.kind == tPipe }, p.parseBitXor)
}

func (p *parser) parseBitXor() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) { return OpBitXor, t.kind == tCaret }, p.parseBitAnd)
}

func (p *parser) parseBitAnd() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) { return OpBitAnd, t.kind == tAmp }, p.parseShift)
}

// parseShift parses the shift operators << >> >>> (Spark 4), which bind
// tighter than & and looser than + -. The lexer keeps '<' and '>' single
// characters, so that a nested type such as ARRAY<ARRAY<INT>> still
// closes; here two or three of them count as one operator only when they
// touch, as Spark's lexer reads them.
func (p *parser) parseShift() Expr {
	x := p.parseAdditive()
	for {
		op, n := p.shiftOp()
		if n == 0 {
			return x
		}
		var t *token
		for range n {
			t = p.next()
		}
		y := p.operand(t, p.parseAdditive)
		x = &BinaryExpr{Pos: x.Position(), Op: op, L: x, R: y}
	}
}

// shiftOp reports the shift operator at the current token and how many
// tokens it spans (0: none).
func (p *parser) shiftOp() (BinaryOp, int) {
	first := p.peek()
	if first.kind != tLt && first.kind != tGt {
		return 0, 0
	}
	n := 1
	for n < 3 {
		t, prev := p.peekAt(n), p.peekAt(n-1)
		if t.kind != first.kind || t.pos.Line != prev.pos.Line || t.pos.Col != prev.pos.Col+1 {
			break
		}
		n++
	}
	switch {
	case first.kind == tLt && n >= 2:
		return OpShiftLeft, 2
	case first.kind == tGt && n == 3:
		return OpShiftRightUnsigned, 3
	case first.kind == tGt && n == 2:
		return OpShiftRight, 2
	}
	return 0, 0
}

func (p *parser) parseAdditive() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) {
		switch t.kind {
		case tPlus:
			return OpAdd, true
		case tMinus:
			return OpSub, true
		case tConcat:
			return OpConcat, true
		}
		return 0, false
	}, p.parseMultiplicative)
}

func (p *parser) parseMultiplicative() Expr {
	return p.binaryLevel(func(t *token) (BinaryOp, bool) {
		switch t.kind {
		case tStar:
			return OpMul, true
		case tSlash:
			return OpDiv, true
		case tPercent:
			return OpMod, true
		case tWord:
			// DIV is not reserved: it is the operator only when an operand
			// follows (SELECT a div FROM t aliases a).
			return OpIntDiv, t.kw == "DIV" && canStartExpr(p.peekAt(1))
		}
		return 0, false
	}, p.parseUnary)
}

// parseUnary parses prefix - + ~. A '-' directly before a number is part
// of the literal, as in Spark's grammar (so -1::string casts -1).
func (p *parser) parseUnary() Expr {
	t := p.peek()
	var op UnaryOp
	switch t.kind {
	case tMinus:
		if n := p.peekAt(1); n.kind == tNumber {
			p.next()
			lit := p.numberLit(n, t.pos, true)
			p.next()
			return p.parsePostfix(lit)
		}
		op = OpNeg
	case tPlus:
		op = OpPlus
	case tTilde:
		op = OpBitNot
	default:
		return p.parsePostfix(p.parsePrimary())
	}
	p.next()
	p.enter()
	defer p.leave()
	return &UnaryExpr{Pos: t.pos, Op: op, X: p.operand(t, p.parseUnary)}
}

// parsePostfix parses .field, [index] and ::type after a primary.
func (p *parser) parsePostfix(x Expr) Expr {
	for {
		switch t := p.peek(); t.kind {
		case tDot:
			p.next()
			x = &FieldAccess{Pos: x.Position(), X: x, Field: p.anyName("a field name after '.'")}
		case tLBracket:
			p.next()
			idx := p.parseExprWhat("an index expression after '['")
			if p.peek().kind != tRBracket {
				p.unexpected("']' to close '[' at " + t.pos.String())
			}
			p.next()
			x = &Subscript{Pos: x.Position(), X: x, Index: idx}
		case tColonColon:
			p.next()
			x = &Cast{Pos: x.Position(), X: x, Type: p.parseType()}
		default:
			return x
		}
	}
}

// parsePrimary parses literals, names, function calls, CASE, CAST,
// parenthesized expressions and scalar subqueries.
func (p *parser) parsePrimary() Expr {
	t := p.peek()
	switch t.kind {
	case tNumber:
		lit := p.numberLit(t, t.pos, false)
		p.next()
		return lit
	case tString:
		return &Literal{Pos: t.pos, Kind: LitString, Value: p.stringValue()}
	case tBinary:
		p.next()
		return &Literal{Pos: t.pos, Kind: LitBinary, Value: t.text}
	case tParam:
		return p.parsePlaceholder(t)
	case tLParen:
		open := p.next()
		if p.isKw("SELECT") || p.isKw("WITH") {
			q := p.parseQuery()
			p.closeParen(open)
			return &Subquery{Pos: open.pos, Query: q}
		}
		x := p.parseExprWhat("an expression after '('")
		if p.peek().kind == tComma || p.isKw("AS") {
			return p.parseRowValue(open, x)
		}
		p.closeParen(open)
		return x
	case tQuoted:
		return p.parseNameOrCall()
	case tWord:
		return p.parseWord(t)
	}
	p.unexpected("an expression")
	return nil
}

// parseRowValue parses the rest of Spark's row constructor (a [AS n],
// b [AS m], ...), of two or more items, after its first expression first.
// It is struct(a [AS n], b [AS m], ...), as Spark builds it (field names
// from the aliases, the columns' names, else col1, col2, ...), so that
// (a, b) IN (SELECT x, y ...) compares column by column and (a, b) IN
// ((1, 2), ...) compares structs.
func (p *parser) parseRowValue(open *token, first Expr) Expr {
	args := []Expr{p.rowItemAlias(first)}
	if p.peek().kind != tComma {
		p.unexpected("',' in the row value (a, b, ...)")
	}
	for p.accept(tComma) {
		args = append(args, p.rowItemAlias(p.parseExprWhat("an expression in the row value")))
	}
	p.closeParen(open)
	return &FuncCall{Pos: open.pos, Name: Ident{Pos: open.pos, Name: "struct"}, Args: args}
}

// rowItemAlias takes the AS name after a row value's item x, if any.
func (p *parser) rowItemAlias(x Expr) Expr {
	if p.isKw("AS") && isAnyName(p.peekAt(1)) {
		p.next()
		return &ArgAlias{Pos: x.Position(), X: x, Name: identOf(p.next())}
	}
	return x
}

// parseWord parses a primary that starts with a word: a keyword-led
// construct or a name.
func (p *parser) parseWord(t *token) Expr {
	next := p.peekAt(1)
	switch t.kw {
	case "NULL":
		p.next()
		return &Literal{Pos: t.pos, Kind: LitNull}
	case "TRUE", "FALSE":
		p.next()
		return &Literal{Pos: t.pos, Kind: LitBool, Value: strings.ToLower(t.kw)}
	case "CASE":
		return p.parseCase()
	case "EXISTS":
		if next.kind == tLParen && (p.isKwAt(2, "SELECT") || p.isKwAt(2, "WITH")) {
			p.next()
			open := p.next()
			q := p.parseQuery()
			p.closeParen(open)
			return &Subquery{Pos: t.pos, Query: q, Exists: true}
		}
	case "CAST":
		return p.parseCast(false)
	case "TRY_CAST":
		if next.kind == tLParen {
			return p.parseCast(true)
		}
	case "CURRENT_TIMESTAMP", "CURRENT_DATE":
		if next.kind != tLParen {
			p.next()
			return &FuncCall{Pos: t.pos, Name: identOf(t), Bare: true}
		}
		return p.parseCall(p.next())
	case "LEFT", "RIGHT":
		// Reserved for joins, but also the names of string functions.
		if next.kind == tLParen {
			return p.parseCall(p.next())
		}
	case "GROUP", "ORDER":
		// Reserved here because they start clauses, but Spark's default
		// (non-ANSI) grammar lets them name columns: selectExpr("value AS
		// group") and then groupBy("group"). Where an expression starts,
		// the clause would need BY next, so any other token means a name.
		if !(next.kind == tWord && next.kw == "BY") {
			return p.parseNameOrCall()
		}
	case "INTERVAL":
		if k := next.kind; k == tNumber || k == tString || k == tMinus || k == tPlus {
			return p.parseInterval()
		}
	case "DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ":
		if next.kind == tString {
			p.next()
			kind := LitDate
			switch t.kw {
			case "TIMESTAMP":
				kind = LitTimestamp
			case "TIMESTAMP_LTZ":
				kind = LitTimestampLTZ
			case "TIMESTAMP_NTZ":
				kind = LitTimestampNTZ
			}
			return &Literal{Pos: t.pos, Kind: kind, Value: p.stringValue()}
		}
	}
	if isReserved(t.kw) && (!p.isLambdaVar(t) || p.peekAt(1).kind == tLParen) {
		p.unexpected("an expression")
	}
	return p.parseNameOrCall()
}

// parseNameOrCall parses a function call name(...) or a name path a.b.c.
func (p *parser) parseNameOrCall() Expr {
	first := p.next()
	if p.peek().kind == tLParen {
		return p.parseCall(first)
	}
	ref := &ColumnRef{Pos: first.pos, Parts: []Ident{identOf(first)}}
	for p.peek().kind == tDot && isAnyName(p.peekAt(1)) {
		p.next()
		ref.Parts = append(ref.Parts, identOf(p.next()))
	}
	if p.peek().kind == tLParen {
		p.failAt(ref.Pos, "function names cannot be qualified")
	}
	return ref
}

// parseCall parses the argument list of a call to the function name:
// (), (*), ([DISTINCT | ALL] expr, ...).
func (p *parser) parseCall(name *token) Expr {
	open := p.next() // (
	fc := &FuncCall{Pos: name.pos, Name: identOf(name)}
	switch {
	case p.peek().kind == tRParen:
	case p.peek().kind == tStar && p.peekAt(1).kind == tRParen:
		fc.Args = []Expr{&Star{Pos: p.next().pos}}
	case p.parseSpecialArgs(fc): // TRIM(x FROM s), SUBSTRING(s FROM p), POSITION(x IN s)
		if p.peek().kind != tRParen {
			p.unexpected("')' after the function arguments")
		}
	default:
		if p.acceptKw("DISTINCT") {
			fc.Distinct = true
			if p.peek().kind == tStar && (p.peekAt(1).kind == tRParen || p.peekAt(1).kind == tComma) {
				// count(DISTINCT *): every column (the analyzer expands it).
				fc.Args = append(fc.Args, &Star{Pos: p.next().pos})
				if !p.accept(tComma) {
					break
				}
			} else if p.peek().kind == tLParen && p.peekAt(1).kind == tStar && p.peekAt(2).kind == tRParen && (p.peekAt(3).kind == tRParen || p.peekAt(3).kind == tComma) {
				// count(DISTINCT (*)): Spark parses (*) as a parenthesized star.
				p.next()
				fc.Args = append(fc.Args, &Star{Pos: p.next().pos})
				p.next()
				if !p.accept(tComma) {
					break
				}
			}
		} else if p.isKw("ALL") && startsExpr(p.peekAt(1), p.peekAt(2)) {
			p.next()
		}
		for {
			fc.Args = append(fc.Args, p.parseCallArg())
			if !p.accept(tComma) {
				break
			}
		}
		if p.peek().kind != tRParen {
			p.unexpected("',' or ')' after the function argument")
		}
	}
	p.closeParen(open)
	p.parseWithinGroup(fc)
	if p.isKw("FILTER") && p.peekAt(1).kind == tLParen {
		p.next()
		open := p.next()
		p.expectKw("WHERE", "WHERE after FILTER (")
		fc.Filter = p.parseExprWhat("a condition after FILTER (WHERE")
		p.closeParen(open)
	}
	p.parseCallSuffix(fc)
	return fc
}

// parseCase parses CASE [operand] WHEN ... THEN ... [ELSE ...] END.
func (p *parser) parseCase() Expr {
	c := &Case{Pos: p.next().pos}
	if !p.isKw("WHEN") {
		c.Operand = p.parseExprWhat("WHEN or an expression after CASE")
		if !p.isKw("WHEN") {
			p.unexpected("WHEN after the CASE operand")
		}
	}
	for p.isKw("WHEN") {
		w := &When{Pos: p.next().pos}
		w.Cond = p.parseExprWhat("an expression after WHEN")
		p.expectKw("THEN", "THEN after the WHEN expression")
		w.Result = p.parseExprWhat("an expression after THEN")
		c.Whens = append(c.Whens, w)
	}
	if p.acceptKw("ELSE") {
		c.Else = p.parseExprWhat("an expression after ELSE")
		p.expectKw("END", "END to close CASE at "+c.Pos.String())
		return c
	}
	p.expectKw("END", "WHEN, ELSE or END to close CASE at "+c.Pos.String())
	return c
}

// parseCast parses CAST(expr AS type) and TRY_CAST(expr AS type).
func (p *parser) parseCast(try bool) Expr {
	kw := p.next()
	open := p.expect(tLParen, "'(' after "+kw.kw)
	c := &Cast{Pos: kw.pos, Try: try}
	c.X = p.parseExprWhat("an expression after " + kw.kw + "(")
	p.expectKw("AS", "AS and a type in "+kw.kw)
	c.Type = p.parseType()
	p.closeParen(open)
	return c
}

// parseIsCompare parses the rest of x IS [NOT] DISTINCT FROM y and
// x IS [NOT] TRUE|FALSE, which Spark rewrites to null-safe equality:
// x IS NOT DISTINCT FROM y is x <=> y, x IS TRUE is x <=> true, and the
// other forms are their negations. ok is false when IS is followed by
// neither (IS [NOT] NULL).
func (p *parser) parseIsCompare(x Expr, not bool) (Expr, bool) {
	var r Expr
	switch {
	case p.isKw("DISTINCT"):
		t := p.next()
		p.expectKw("FROM", "FROM after IS DISTINCT")
		r = p.operand(t, p.parseComparison)
		// DISTINCT is the negation of <=>: IS NOT DISTINCT is <=> itself.
		not = !not
	case p.isKw("TRUE"), p.isKw("FALSE"):
		t := p.next()
		r = &Literal{Pos: t.pos, Kind: LitBool, Value: strings.ToLower(t.kw)}
	default:
		return nil, false
	}
	var e Expr = &BinaryExpr{Pos: x.Position(), Op: OpNullSafeEq, L: x, R: r}
	if not {
		e = &UnaryExpr{Pos: x.Position(), Op: OpNot, X: e}
	}
	return e, true
}

// parseLikeQuantified parses the rest of x [NOT] LIKE|ILIKE ANY|SOME|ALL
// (p1, ...) from the quantifier on, as Spark's parser rewrites it: the
// OR (ANY, SOME) or AND (ALL) of x [NOT] LIKE p for each pattern, whose
// three-valued logic is that of Spark's LikeAny/LikeAll family (a NULL
// pattern makes the answer NULL unless another decides it).
func (p *parser) parseLikeQuantified(x Expr, op LikeOp, not bool) Expr {
	q := strings.ToUpper(p.next().text)
	join := OpOr
	if q == "ALL" {
		join = OpAnd
	}
	open := p.expect(tLParen, "'(' after "+q)
	if p.peek().kind == tRParen {
		p.unexpected("a pattern between '(' and ')'")
	}
	var out Expr
	for {
		l := &Like{Pos: x.Position(), Op: op, X: x, Not: not, Pattern: p.parseExprWhat("a pattern of LIKE " + q)}
		if out == nil {
			out = l
		} else {
			out = &BinaryExpr{Pos: x.Position(), Op: join, L: out, R: l}
		}
		if !p.accept(tComma) {
			break
		}
	}
	if p.peek().kind != tRParen {
		p.unexpected("',' or ')' after a pattern of LIKE " + q)
	}
	p.closeParen(open)
	return out
}

// likeQuantifierAt reports whether the tokens from k on are ANY, SOME or
// ALL and '(' (LIKE ANY (...)).
func (p *parser) likeQuantifierAt(k int) bool {
	t := p.peekAt(k)
	return (isWord(t, "ANY") || isWord(t, "SOME") || isWord(t, "ALL")) && p.peekAt(k+1).kind == tLParen
}
