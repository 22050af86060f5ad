package sql

// Lambda is a lambda function argument of a higher-order function:
// x -> body or (x, i) -> body.
type Lambda struct {
	Pos
	Params []Ident
	Body   Expr
}

// ArgAlias is a function argument with a name, expr AS name, as in
// struct(a AS x, b AS y).
type ArgAlias struct {
	Pos
	X    Expr
	Name Ident
}

func (*Lambda) exprNode()   {}
func (*ArgAlias) exprNode() {}
