package plan

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Comparing a number with a string follows two different rules in Spark.
// With ANSI on (Spark 4's AnsiTypeCoercion) both sides become bigint next
// to an integral number and double next to a fractional one, which
// comparisonType implements. With ANSI off (Spark 3's TypeCoercion,
// findCommonTypeForBinaryComparison) the string takes the number's own
// type, except next to a decimal, where both sides become double; the
// legacy cast then reads '2.2' as the integer 2. The analyzer does not know
// the session's mode, so coerceComparison builds the ANSI casts and records
// the legacy target in each of them; applyOptions switches to it when the
// session runs with ANSI off.

// legacyComparisonType is the type Spark 3 compares a string with a value
// of numeric type t as; nil when t is not a number.
func legacyComparisonType(t arrow.DataType) arrow.DataType {
	t = vector.Unwrap(t)
	switch {
	case t.ID() == arrow.DECIMAL128 || t.ID() == arrow.DECIMAL256:
		return vector.Float64
	case vector.IsNumeric(t):
		return t
	}
	return nil
}

// markLegacyComparison records in the casts lc and rc that coerceComparison
// built for operands of types lt and rt the legacy type of a
// number-against-string comparison.
func markLegacyComparison(lt, rt arrow.DataType, lc, rc Expr) {
	var legacy arrow.DataType
	switch {
	case isString(vector.Unwrap(lt)) && !isString(vector.Unwrap(rt)):
		legacy = legacyComparisonType(rt)
	case isString(vector.Unwrap(rt)) && !isString(vector.Unwrap(lt)):
		legacy = legacyComparisonType(lt)
	}
	if legacy == nil {
		return
	}
	for _, e := range []Expr{lc, rc} {
		if c, ok := e.(*Cast); ok {
			c.legacyTo = legacy
		}
	}
}

// inferTypeOpaque types e from its children's types alone, every child a
// column: for calls whose constant arguments fail to evaluate.
func inferTypeOpaque(e Expr) (arrow.DataType, error) {
	kids := e.Children()
	fields := make([]arrow.Field, len(kids))
	placeholders := make([]Expr, len(kids))
	for i, k := range kids {
		fields[i] = arrow.Field{Name: k.String(), Type: k.DataType(), Nullable: true}
		placeholders[i] = &ColumnRef{Index: i, Name: fields[i].Name, Type: k.DataType(), Null: true}
	}
	ve, err := ToVectorExpr(WithChildren(e, placeholders), nil)
	if err != nil {
		return nil, err
	}
	ev, err := ve.Bind(arrow.NewSchema(fields, nil), memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	return ev.DataType(), nil
}

// legacyBooleanEquality is Spark 3's BooleanEquality coercion (ANSI off):
// a boolean compared for equality (=, <=>, and <>, which Spark parses as
// NOT =) with a number is cast to the number's type, so true = 1 and
// false = 0 hold and true = 2 does not (Spark's shortcuts for the literals
// 1 and 0 give the same answers). With ANSI on the comparison is a type
// error, as in Spark's AnsiTypeCoercion.
func legacyBooleanEquality(op string, l, r Expr) (Expr, Expr) {
	if op != "=" && op != "<=>" && op != "<>" {
		return l, r
	}
	lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(r.DataType())
	switch {
	case lt.ID() == arrow.BOOL && vector.IsNumeric(rt):
		return castTo(l, rt), r
	case rt.ID() == arrow.BOOL && vector.IsNumeric(lt):
		return l, castTo(r, lt)
	}
	return l, r
}
