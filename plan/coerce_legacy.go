package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Common types with ANSI off (Spark 3's TypeCoercion.findWiderCommonType,
// used by CASE, IF, coalesce, nvl, nvl2, decode and IN): a string widens
// with any atomic type to a string, except with a boolean or a binary,
// with which there is no common type (stringPromotion). ANSI mode keeps
// commonType's rules.

// legacyStringClash returns a string type and a boolean or binary type
// found among types (ok false when there is no such pair).
func legacyStringClash(types []arrow.DataType) (str, other arrow.DataType, ok bool) {
	for _, t := range types {
		t = vector.Unwrap(t)
		switch {
		case t == nil:
		case isString(t):
			str = t
		case t.ID() == arrow.BOOL || t.ID() == arrow.BINARY || t.ID() == arrow.LARGE_BINARY:
			other = t
		}
	}
	return str, other, str != nil && other != nil
}

// legacyCommonCheck refuses values without a common type under ANSI off;
// what names the construct.
func legacyCommonCheck(pos sql.Pos, what string, es []Expr) error {
	types := make([]arrow.DataType, len(es))
	for i, e := range es {
		types[i] = e.DataType()
	}
	if s, o, ok := legacyStringClash(types); ok {
		return errorAt(pos, ErrType, "Cannot resolve %s due to data type mismatch: %s and %s have no common type (with spark.sql.ansi.enabled=false a string does not widen with a boolean or a binary).", what, vector.TypeName(s), vector.TypeName(o))
	}
	return nil
}

// legacyIn coerces the value and list of IN with ANSI off: when a string
// meets another type, every operand becomes a string (a number, date or
// timestamp compares as its text); a string with a boolean or a binary
// is an error. handled is false when no string meets another type.
func legacyIn(pos sql.Pos, v Expr, list []Expr) (Expr, []Expr, bool, error) {
	all := append([]Expr{v}, list...)
	hasString, hasOther := false, false
	for _, e := range all {
		t := vector.Unwrap(e.DataType())
		switch {
		case isNullType(t):
		case isString(t):
			hasString = true
		default:
			hasOther = true
		}
	}
	if !hasString || !hasOther {
		return v, list, false, nil
	}
	if err := legacyCommonCheck(pos, "IN", all); err != nil {
		return nil, nil, true, err
	}
	out := make([]Expr, len(all))
	for i, e := range all {
		t := vector.Unwrap(e.DataType())
		if !isAtomic(t) && !isNullType(t) {
			return nil, nil, true, errorAt(pos, ErrType, "Cannot resolve IN due to data type mismatch: %s and string have no common type.", vector.TypeName(t))
		}
		out[i] = e
		if !isString(t) {
			out[i] = castTo(e, vector.String)
		}
	}
	return out[0], out[1:], true, nil
}

// legacySetOpCheck refuses a UNION, EXCEPT or INTERSECT column where a
// string meets a boolean or a binary under ANSI off (WidenSetOperationTypes
// uses findWiderTypeForTwo).
func (a *analyzer) legacySetOpCheck(pos sql.Pos, nodes []Node) error {
	if a.b == nil || !a.b.legacy {
		return nil
	}
	first := nodes[0].Schema()
	for c := 0; c < first.NumFields(); c++ {
		types := make([]arrow.DataType, 0, len(nodes))
		for _, n := range nodes {
			if c < n.Schema().NumFields() {
				types = append(types, n.Schema().Field(c).Type)
			}
		}
		if s, o, ok := legacyStringClash(types); ok {
			return errorAt(pos, ErrType, "Union can only be performed on tables with compatible column types: column %d (%s) has types %s and %s, which have no common type with spark.sql.ansi.enabled=false.", c+1, backquote(first.Field(c).Name), vector.TypeName(s), vector.TypeName(o))
		}
	}
	return nil
}

// timestampsAsText casts the timestamp operands of a string concatenation
// to strings in the plan, where the session time zone reaches the cast
// (concat's own conversion would show them in UTC).
func timestampsAsText(args []Expr) []Expr {
	out := append([]Expr(nil), args...)
	for i, a := range out {
		if t := vector.Unwrap(a.DataType()); t != nil && t.ID() == arrow.TIMESTAMP {
			out[i] = castTo(a, vector.String)
		}
	}
	return out
}
