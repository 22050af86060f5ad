package sql

import (
	"strconv"
	"strings"
)

// Placeholder is a statement parameter, $1, $2, ... (Index is 1-based).
// Parse leaves it in the tree (the analyzer refuses it: a value must be
// bound); ParseWithParams replaces it by the expression of its value.
type Placeholder struct {
	Pos
	Index int
}

func (*Placeholder) exprNode() {}

// MaxParams bounds a placeholder's number.
const MaxParams = 65535

// Binder returns the expression placeholder $index (at pos) stands for,
// or an error that fails the parse.
type Binder func(index int, pos Pos) (Expr, error)

// ParseWithParams parses a statement as ParseWith does, replacing each
// $n placeholder by bind's expression for it: a value is bound as an
// expression node, never as text, so it cannot change the statement.
func ParseWithParams(src string, l Limits, bind Binder) (Statement, error) {
	l = l.withDefaults()
	if l.MaxStatementBytes > 0 && len(src) > l.MaxStatementBytes {
		return nil, &LimitError{Limit: "MaxStatementBytes", Max: l.MaxStatementBytes, Got: len(src)}
	}
	st, err := runParser(&parser{toks: lex(src), bind: bind}, func(p *parser) Statement {
		s := p.parseStatement()
		p.accept(tSemi)
		p.expectEnd("end of input after the statement")
		return s
	})
	if err != nil {
		return nil, err
	}
	if err := checkExprNodes(st, l.MaxExprNodes); err != nil {
		return nil, err
	}
	return st, nil
}

// param scans $digits.
func (l *lexer) param(pos Pos) token {
	start := l.off
	l.advance(1)
	for l.digitAt(l.off) {
		l.advance(1)
	}
	raw := l.src[start:l.off]
	return token{kind: tParam, text: raw[1:], raw: raw, pos: pos}
}

func (p *parser) parsePlaceholder(t *token) Expr {
	p.next()
	n, err := strconv.Atoi(strings.TrimLeft(t.text, "0"))
	if err != nil || n < 1 || n > MaxParams {
		p.failAt(t.pos, "parameter %s is out of range: placeholders are $1 to $%d", t.raw, MaxParams)
	}
	if p.bind == nil {
		return &Placeholder{Pos: t.pos, Index: n}
	}
	x, err := p.bind(n, t.pos)
	if err != nil {
		p.failAt(t.pos, "%s", err.Error())
	}
	return x
}
