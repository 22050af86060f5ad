package vector

// sqlText is the SQL text of an expression or operand as runtime errors
// show it. It is rendered only when an error is built: rendering at bind
// time, as every node of a chain of n operators would, costs O(n²).
type sqlText struct {
	e Expr   // rendered with e.String() when not nil
	s string // the text otherwise
}

// textOf is e's text, rendered when needed.
func textOf(e Expr) sqlText { return sqlText{e: e} }

// plainText is text known already.
func plainText(s string) sqlText { return sqlText{s: s} }

// String renders the text.
func (t sqlText) String() string {
	if t.e != nil {
		return t.e.String()
	}
	return t.s
}

// empty reports whether the text is "" (a constant operand is not named).
func (t sqlText) empty() bool { return t.e == nil && t.s == "" }
