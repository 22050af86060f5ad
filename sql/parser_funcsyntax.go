package sql

import "strings"

// The special argument syntax of some of Spark's functions, parsed into
// the plain call it means:
//
//	TRIM([BOTH | LEADING | TRAILING] [chars] FROM str)  → trim/ltrim/rtrim(chars, str) or (str)
//	SUBSTRING(str FROM pos [FOR len]), SUBSTR(...)       → substring(str, pos[, len])
//	POSITION(substr IN str)                              → position(substr, str)
//	EXTRACT(field FROM source)                           → date_part('field', source)
//	OVERLAY(str PLACING repl FROM pos [FOR len])         → overlay(str, repl, pos[, len])
//
// The function forms trim(chars, str), ltrim(chars, str) and
// rtrim(chars, str) take the characters first, as Spark's do.

// parseSpecialArgs parses the arguments of fc when its name has special
// syntax and the tokens after the parenthesis use it; ok is false (and
// nothing is consumed) otherwise.
func (p *parser) parseSpecialArgs(fc *FuncCall) (ok bool) {
	switch strings.ToLower(fc.Name.Name) {
	case "trim":
		return p.parseTrimArgs(fc)
	case "substring", "substr":
		return p.parseSubstringArgs(fc)
	case "position":
		return p.parsePositionArgs(fc)
	case "overlay":
		return p.parseOverlayArgs(fc)
	case "extract":
		// EXTRACT(field FROM source) → date_part('field', source).
		if t := p.peek(); t.kind == tWord && p.isKwAt(1, "FROM") {
			p.next()
			p.next()
			fc.Name.Name = "date_part"
			fc.Args = []Expr{&Literal{Pos: t.pos, Kind: LitString, Value: t.text}, p.parseExprWhat("the source after FROM")}
			return true
		}
	}
	return false
}

func (p *parser) parseTrimArgs(fc *FuncCall) bool {
	name := ""
	t := p.peek()
	switch {
	case wordIs(t, "BOTH"):
		name = "trim"
	case wordIs(t, "LEADING"):
		name = "ltrim"
	case wordIs(t, "TRAILING"):
		name = "rtrim"
	}
	if name != "" {
		p.next()
		if p.acceptKw("FROM") {
			fc.Name.Name = name
			fc.Args = []Expr{p.parseExprWhat("the string to trim after FROM")}
			return true
		}
		chars := p.parseExprWhat("the characters to trim")
		p.expectKw("FROM", "FROM after the characters to trim")
		fc.Name.Name = name
		fc.Args = []Expr{chars, p.parseExprWhat("the string to trim after FROM")}
		return true
	}
	// TRIM(chars FROM str): the first argument is followed by FROM.
	if !startsExpr(p.peek(), p.peekAt(1)) {
		return false
	}
	first := p.parseExprWhat("a function argument")
	if p.acceptKw("FROM") {
		fc.Args = []Expr{first, p.parseExprWhat("the string to trim after FROM")}
		return true
	}
	fc.Args = []Expr{first}
	for p.accept(tComma) {
		fc.Args = append(fc.Args, p.parseExprWhat("a function argument"))
	}
	return true
}

func (p *parser) parseSubstringArgs(fc *FuncCall) bool {
	if !startsExpr(p.peek(), p.peekAt(1)) {
		return false
	}
	str := p.parseExprWhat("a function argument")
	fc.Args = []Expr{str}
	if p.acceptKw("FROM") {
		fc.Args = append(fc.Args, p.parseExprWhat("the start position after FROM"))
		if p.acceptKw("FOR") {
			fc.Args = append(fc.Args, p.parseExprWhat("the length after FOR"))
		}
		return true
	}
	for p.accept(tComma) {
		fc.Args = append(fc.Args, p.parseExprWhat("a function argument"))
	}
	return true
}

func (p *parser) parsePositionArgs(fc *FuncCall) bool {
	if !startsExpr(p.peek(), p.peekAt(1)) {
		return false
	}
	// The substring is an operand tighter than IN (a predicate), so that
	// POSITION('a' IN s) does not parse as the IN list predicate.
	sub := p.parseComparison()
	if p.acceptKw("IN") {
		fc.Args = []Expr{sub, p.parseExprWhat("the string after IN")}
		return true
	}
	fc.Args = []Expr{sub}
	for p.accept(tComma) {
		fc.Args = append(fc.Args, p.parseExprWhat("a function argument"))
	}
	return true
}

func (p *parser) parseOverlayArgs(fc *FuncCall) bool {
	if !startsExpr(p.peek(), p.peekAt(1)) {
		return false
	}
	str := p.parseExprWhat("a function argument")
	fc.Args = []Expr{str}
	// PLACING is no reserved word: it is read by its text.
	if wordIs(p.peek(), "PLACING") {
		p.next()
		fc.Args = append(fc.Args, p.parseExprWhat("the replacement after PLACING"))
		p.expectKw("FROM", "FROM after the replacement of OVERLAY")
		fc.Args = append(fc.Args, p.parseExprWhat("the start position after FROM"))
		if p.acceptKw("FOR") {
			fc.Args = append(fc.Args, p.parseExprWhat("the length after FOR"))
		}
		return true
	}
	for p.accept(tComma) {
		fc.Args = append(fc.Args, p.parseExprWhat("a function argument"))
	}
	return true
}
