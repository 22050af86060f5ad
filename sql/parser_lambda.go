package sql

import "strings"

// parseCallArg parses one function argument: an expression, a lambda
// (x -> body, (x, y) -> body), a qualified star (s.*, for struct(s.*)),
// or an expression with a name (expr AS name, for struct(...)).
func (p *parser) parseCallArg() Expr {
	if l := p.parseLambda(); l != nil {
		return l
	}
	if p.isQualifiedStar() {
		st := &Star{Pos: p.peek().pos}
		for p.peek().kind != tStar {
			st.Qualifier = append(st.Qualifier, identOf(p.next()))
			p.next() // .
		}
		p.next() // *
		return st
	}
	x := p.parseExprWhat("a function argument")
	if p.isKw("AS") && isAnyName(p.peekAt(1)) {
		p.next()
		return &ArgAlias{Pos: x.Position(), X: x, Name: identOf(p.next())}
	}
	return x
}

// isQualifiedStar reports whether name(.name)*.* follows.
func (p *parser) isQualifiedStar() bool {
	k := 0
	for isAnyName(p.peekAt(k)) && p.peekAt(k+1).kind == tDot {
		k += 2
		if p.peekAt(k).kind == tStar {
			next := p.peekAt(k + 1).kind
			return next == tComma || next == tRParen
		}
	}
	return false
}

// parseLambda parses a lambda if one starts here, else returns nil
// without consuming anything.
func (p *parser) parseLambda() *Lambda {
	t := p.peek()
	switch {
	case isAnyName(t) && p.peekAt(1).kind == tArrow:
		p.next()
		p.next()
		params := []Ident{identOf(t)}
		return &Lambda{Pos: t.pos, Params: params, Body: p.parseLambdaBody(params)}
	case t.kind == tLParen:
		k := 1
		for isAnyName(p.peekAt(k)) {
			if p.peekAt(k+1).kind == tComma {
				k += 2
				continue
			}
			if p.peekAt(k+1).kind != tRParen || p.peekAt(k+2).kind != tArrow {
				return nil
			}
			p.next() // (
			var params []Ident
			for {
				params = append(params, identOf(p.next()))
				if !p.accept(tComma) {
					break
				}
			}
			p.next() // )
			p.next() // ->
			return &Lambda{Pos: t.pos, Params: params, Body: p.parseLambdaBody(params)}
		}
	}
	return nil
}

// parseLambdaBody parses the body of a lambda with params in scope.
func (p *parser) parseLambdaBody(params []Ident) Expr {
	n := len(p.lambdaVars)
	for _, v := range params {
		p.lambdaVars = append(p.lambdaVars, v.Name)
	}
	body := p.parseExprWhat("the body of a lambda")
	p.lambdaVars = p.lambdaVars[:n]
	return body
}

// isLambdaVar reports whether t is a word naming a parameter of an
// enclosing lambda.
func (p *parser) isLambdaVar(t *token) bool {
	if t.kind != tWord {
		return false
	}
	for _, v := range p.lambdaVars {
		if strings.EqualFold(v, t.text) {
			return true
		}
	}
	return false
}
