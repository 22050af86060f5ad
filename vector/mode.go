package vector

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// EvalMode is how an expression treats a value it cannot compute (a string
// that does not parse, a result that overflows, a zero divisor). Spark
// decides it per query with spark.sql.ansi.enabled, and per call with the
// try_ functions; the planner records it in each expression, so it is no
// global state.
type EvalMode uint8

// The evaluation modes. The zero value is ANSI, Spark 4's default.
const (
	// ModeANSI raises Spark's error (CAST_INVALID_INPUT, CAST_OVERFLOW,
	// ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO, ...): spark.sql.ansi.enabled=true.
	ModeANSI EvalMode = iota
	// ModeLegacy gives Spark 3's results without ANSI: NULL for input that
	// does not parse and for division by zero, integer results that wrap
	// and floating-point values that saturate (Java's narrowing).
	ModeLegacy
	// ModeTry gives NULL wherever ANSI would raise (try_cast, try_add, ...).
	ModeTry
)

func (m EvalMode) String() string {
	switch m {
	case ModeANSI:
		return "ansi"
	case ModeLegacy:
		return "legacy"
	case ModeTry:
		return "try"
	}
	return fmt.Sprintf("EvalMode(%d)", uint8(m))
}

// ErrInvalidInput is a value that does not parse as the cast's target type
// (Spark's CAST_INVALID_INPUT).
var ErrInvalidInput = errors.New("invalid input")

// SparkError is a runtime error with Spark's error class: its message starts
// with [CLASS] as Spark's does, and it wraps the sentinel callers act on
// (ErrOverflow, ErrDivideByZero, ErrInvalidInput).
type SparkError struct {
	Class string // ARITHMETIC_OVERFLOW, CAST_INVALID_INPUT, ...
	Msg   string // Spark's message, without the class
	Err   error  // the sentinel
}

func (e *SparkError) Error() string { return "[" + e.Class + "] " + e.Msg }

func (e *SparkError) Unwrap() error { return e.Err }

const ansiHint = `If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.`

// sqlTypeLabel is a type as Spark's messages quote it: "INT", "STRING".
func sqlTypeLabel(dt arrow.DataType) string {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return fmt.Sprintf(`"DECIMAL(%d,%d)"`, d.Precision, d.Scale)
	}
	return `"` + sqlTypeName(Unwrap(dt)) + `"`
}

// decimalLabel is a decimal type as Spark's NUMERIC_VALUE_OUT_OF_RANGE
// names it: Decimal(4, 2).
func decimalLabel(dt arrow.DataType) string {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return fmt.Sprintf("Decimal(%d, %d)", d.Precision, d.Scale)
	}
	return sqlTypeName(dt)
}

// errCastInvalid is CAST_INVALID_INPUT for value (already formatted as
// Spark quotes it: 'abc' for strings) of type from cast to to.
func errCastInvalid(value string, from, to arrow.DataType) error {
	return &SparkError{Class: "CAST_INVALID_INPUT", Err: ErrInvalidInput, Msg: fmt.Sprintf(
		"The value %s of the type %s cannot be cast to %s because it is malformed. Correct the value as per the syntax, or change its target type. To return NULL instead, use `try_cast`. %s",
		value, sqlTypeLabel(from), sqlTypeLabel(to), ansiHint)}
}

// errCastOverflowValue is CAST_OVERFLOW for a numeric value.
func errCastOverflowValue(value string, from, to arrow.DataType) error {
	return &SparkError{Class: "CAST_OVERFLOW", Err: ErrOverflow, Msg: fmt.Sprintf(
		"The value %s of the type %s cannot be cast to %s due to an overflow. Use `try_cast` to tolerate overflow and return NULL instead. %s",
		value, sqlTypeLabel(from), sqlTypeLabel(to), ansiHint)}
}

// errDecimalOutOfRange is NUMERIC_VALUE_OUT_OF_RANGE: value does not fit the
// decimal type to.
func errDecimalOutOfRange(value string, to arrow.DataType) error {
	return &SparkError{Class: "NUMERIC_VALUE_OUT_OF_RANGE", Err: ErrOverflow, Msg: fmt.Sprintf(
		"%s cannot be represented as %s. %s", value, decimalLabel(to), ansiHint)}
}

// errArithOverflow is ARITHMETIC_OVERFLOW; try names the try_ function that
// tolerates it. The message stays short because the EvalError around it
// goes on with the expression and the operands.
func errArithOverflow(_ string) error {
	return &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "arithmetic overflow"}
}

// errDivideByZero is DIVIDE_BY_ZERO.
var errDivideByZero error = &SparkError{Class: "DIVIDE_BY_ZERO", Err: ErrDivideByZero, Msg: "division by zero"}

// tryName is the try_ function of an arithmetic operator.
func tryName(op ArithOp) string {
	switch op {
	case ArithAdd:
		return "try_add"
	case ArithSub:
		return "try_subtract"
	case ArithMul:
		return "try_multiply"
	}
	return "try_divide"
}
