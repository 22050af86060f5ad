package plan

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// isAnyTimestamp reports whether e is a TIMESTAMP or a TIMESTAMP_NTZ.
func isAnyTimestamp(e Expr) bool {
	dt := vector.Unwrap(e.DataType())
	return dt != nil && dt.ID() == arrow.TIMESTAMP
}

// timestampSubtract resolves l - r when either operand is a timestamp and
// neither an interval (Spark's SubtractTimestamps): a day-time interval.
// The operands are brought to one type as Spark's DateTimeOperations
// coercion does: a date (and, under ANSI, a string) takes the other
// operand's timestamp type, and TIMESTAMP next to TIMESTAMP_NTZ makes both
// TIMESTAMP_NTZ (the TIMESTAMP read in the session time zone). ok is false
// for operands this is not about, which resolve as before.
func (r *resolver) timestampSubtract(pos sql.Pos, l, rr Expr) (e Expr, ok bool, err error) {
	if !isAnyTimestamp(l) && !isAnyTimestamp(rr) {
		return nil, false, nil
	}
	other := rr
	if !isAnyTimestamp(l) {
		other = l
	}
	switch {
	case isAnyTimestamp(other), isDate(other):
	case isNullType(other.DataType()):
		// timestamp - NULL: Spark's NULL takes the timestamp's type, and
		// the difference is a NULL interval day to second.
	case isString(other.DataType()):
		if r.legacy() {
			// Without ANSI, Spark promotes a string operand of arithmetic
			// to a double, which SubtractTimestamps does not take; which
			// rule wins depends on the order of Spark's analyzer rules, so
			// the engine refuses rather than guess.
			return nil, true, errorAt(pos, ErrType, "Cannot resolve (%s - %s) due to data type mismatch: with spark.sql.ansi.enabled=false a string operand of a timestamp subtraction is not supported; cast it to a timestamp.", l, rr)
		}
	default:
		return nil, false, nil
	}
	lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(rr.DataType())
	switch {
	case isAnyTimestamp(l) && isAnyTimestamp(rr):
		if !arrow.TypeEqual(lt, rt) {
			l, rr = castTo(l, vector.TimestampNTZ), castTo(rr, vector.TimestampNTZ)
		}
	case isAnyTimestamp(l):
		rr = castTo(rr, lt)
	default:
		l = castTo(l, rt)
	}
	e, err = newCall(pos, "timestamp_subtract", l, rr)
	return e, true, err
}
