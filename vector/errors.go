package vector

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors that callers act on; runtime errors wrap them.
var (
	// ErrOverflow is an integer overflow in arithmetic or a cast (ANSI mode).
	ErrOverflow = errors.New("arithmetic overflow")
	// ErrDivideByZero is an integral or decimal division or remainder by zero.
	ErrDivideByZero = errors.New("division by zero")
	// ErrUnknownColumn is a column reference that the input does not have.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrType is an argument of a type the expression does not accept.
	ErrType = errors.New("type mismatch")
)

// BindError is an error found while binding an expression to a schema. It
// names the expression and, so that a user can correct a name, the columns
// that were available.
type BindError struct {
	Expr      string   // the expression that failed to bind
	Available []string // the input's column names
	Err       error    // what went wrong; wraps a sentinel where one fits
}

func (e *BindError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot bind %s: %v", e.Expr, e.Err)
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, " (available columns: %s)", strings.Join(e.Available, ", "))
	}
	return b.String()
}

func (e *BindError) Unwrap() error { return e.Err }

// EvalError is a runtime error of an expression on one row: it names the
// expression, the row index within the batch and the operand values.
type EvalError struct {
	Expr   string // the expression that failed
	Row    int    // the row's index in the batch
	Values string // the operands, as "a=1, b=0"
	Err    error  // wraps ErrOverflow, ErrDivideByZero, ...
}

func (e *EvalError) Error() string {
	if e.Values == "" {
		return fmt.Sprintf("%v in %s at row %d", e.Err, e.Expr, e.Row)
	}
	return fmt.Sprintf("%v in %s at row %d (%s)", e.Err, e.Expr, e.Row, e.Values)
}

func (e *EvalError) Unwrap() error { return e.Err }
