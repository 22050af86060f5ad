package plan

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/arrowstream/arrowstream/sql"

	"github.com/arrowstream/arrowstream/vector"
)

// Arithmetic coercions that depend on more than the operands' types.
//
// Spark's DecimalPrecision promotes an integral operand next to a decimal
// to the decimal of its type's digits (tinyint 3, smallint 5, int 10,
// bigint 20), except an integral *literal* written in the query, which
// takes the digits of its value (literalPickMinimumPrecision). The rule
// runs during analysis, before constant folding, so cast(1 AS int) is not a
// literal there: it is made explicit here, as the vector kernels see only
// whether an operand is constant.
//
// With ANSI off, Spark 3's PromoteStrings casts a string operand of
// arithmetic to double whatever the other operand (ANSI casts it to bigint
// next to an integral number).

// integralDecimal is DecimalType.forType of an integral type.
func integralDecimal(t arrow.DataType) arrow.DataType {
	switch t.ID() {
	case arrow.INT8:
		return vector.Decimal(3, 0)
	case arrow.INT16:
		return vector.Decimal(5, 0)
	case arrow.INT32:
		return vector.Decimal(10, 0)
	}
	return vector.Decimal(20, 0)
}

func isDecimalType(t arrow.DataType) bool {
	t = vector.Unwrap(t)
	return t != nil && (t.ID() == arrow.DECIMAL128 || t.ID() == arrow.DECIMAL256)
}

// isIntegralLiteral reports whether e is an integral literal of the query
// (a non-NULL *Literal, not a folded expression).
func isIntegralLiteral(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.Value != nil && !l.castValue && vector.IsIntegral(vector.Unwrap(l.Type))
}

// decimalOperands casts an integral operand that is not a literal to the
// decimal of its type when the other operand is a decimal.
func decimalOperands(l, r Expr) (Expr, Expr) {
	lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(r.DataType())
	switch {
	case isDecimalType(rt) && vector.IsIntegral(lt) && !isIntegralLiteral(l):
		return castTo(l, integralDecimal(lt)), r
	case isDecimalType(lt) && vector.IsIntegral(rt) && !isIntegralLiteral(r):
		return l, castTo(r, integralDecimal(rt))
	}
	return l, r
}

// legacyArithmetic casts the string operands of arithmetic to double, as
// PromoteStrings does with ANSI off.
func legacyArithmetic(l, r Expr) (Expr, Expr) {
	if isString(vector.Unwrap(l.DataType())) {
		l = castTo(l, vector.Float64)
	}
	if isString(vector.Unwrap(r.DataType())) {
		r = castTo(r, vector.Float64)
	}
	return l, r
}

// legacyDateArithmetic refuses a date plus or minus a string with ANSI
// off: PromoteStrings makes the string a double, and date_add and
// date_sub take only an int, smallint or tinyint number of days.
func legacyDateArithmetic(pos sql.Pos, op string, l, r Expr) error {
	lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(r.DataType())
	isDate := func(t arrow.DataType) bool { return t != nil && t.ID() == arrow.DATE32 }
	// string - date subtracts dates (the string is read as a date).
	d, days := l, r
	switch {
	case isDate(lt) && isString(rt):
	case op == "+" && isDate(rt) && isString(lt):
		d, days = r, l
	default:
		return nil
	}
	fn := map[string]string{"+": "date_add", "-": "date_sub"}[op]
	return errorAt(pos, ErrType, "Cannot resolve %s(%s, %s) due to data type mismatch: with spark.sql.ansi.enabled=false a string operand of arithmetic is a double, and the number of days must be an int, smallint or tinyint.", fn, d, days)
}
