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
		return strings.ToLower(Format(e))
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
