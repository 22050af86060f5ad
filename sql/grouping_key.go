package sql

import (
	"sort"
	"strings"
)

// groupingKey is the text by which two grouping expressions are the same
// expression, as Spark's semantic equality decides it for grouping sets:
// the operands of a commutative operator (AND, OR, =, <=>, <>, &, |, ^, +,
// *) are compared in any order, a chain of one such operator in any
// grouping (a + b + c is c + (b + a)), and a > b is b < a (>= likewise).
func groupingKey(e Expr) string {
	b, ok := e.(*BinaryExpr)
	if !ok {
		return foldCaseOutsideStrings(Format(e))
	}
	switch b.Op {
	case OpGt:
		return "(" + groupingKey(b.R) + " < " + groupingKey(b.L) + ")"
	case OpGe:
		return "(" + groupingKey(b.R) + " <= " + groupingKey(b.L) + ")"
	case OpAnd, OpOr, OpEq, OpNullSafeEq, OpNe, OpBitAnd, OpBitOr, OpBitXor, OpAdd, OpMul:
	default:
		return "(" + groupingKey(b.L) + " " + b.Op.String() + " " + groupingKey(b.R) + ")"
	}
	var keys []string
	var flatten func(x Expr)
	flatten = func(x Expr) {
		// = <=> <> are not associative: only their two operands swap.
		if c, ok := x.(*BinaryExpr); ok && c.Op == b.Op && c.Op != OpEq && c.Op != OpNullSafeEq && c.Op != OpNe {
			flatten(c.L)
			flatten(c.R)
			return
		}
		keys = append(keys, groupingKey(x))
	}
	if b.Op == OpEq || b.Op == OpNullSafeEq || b.Op == OpNe {
		keys = []string{groupingKey(b.L), groupingKey(b.R)}
	} else {
		flatten(b)
	}
	sort.Strings(keys)
	return "(" + strings.Join(keys, " "+b.Op.String()+" ") + ")"
}

// foldCaseOutsideStrings lower-cases formatted SQL except inside string
// literals: identifiers and keywords are case-insensitive, a literal's
// text is not ('A' and 'a' are different grouping expressions). The text
// comes from Format, whose literals are single-quoted with backslash
// escapes (quoteString).
func foldCaseOutsideStrings(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\' && i+1 < len(text):
			b.WriteByte(c)
			i++
			b.WriteByte(text[i])
			continue
		case c == '\'':
			inString = !inString
		case !inString && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case !inString && c >= 0x80:
			// A non-ASCII identifier: fold it by runes.
			j := i
			for j < len(text) && text[j] >= 0x80 {
				j++
			}
			b.WriteString(strings.ToLower(text[i:j]))
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
