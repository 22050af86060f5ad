package vector

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Arithmetic of day-time intervals (microseconds in an int64), as Spark's
// ANSI interval operators: the sum and difference of two intervals, the
// negation and absolute value, the product and quotient by a number
// (MultiplyDTInterval, DivideDTInterval), the whole quotient of two
// intervals (div) and a timestamp plus or minus an interval column. A
// result beyond a long of microseconds raises ARITHMETIC_OVERFLOW whatever
// the ANSI setting, as Spark's do for ANSI intervals.

func errDTOverflow() error {
	return &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "long overflow"}
}

// dtOperand is argument k of f, a day-time interval (or NULL), viewed as
// its int64 microseconds.
func dtOperand(f *FuncExpr, args []Evaluator, k int, mem memory.Allocator) (Evaluator, error) {
	dt := Unwrap(args[k].DataType())
	switch {
	case dt.ID() == arrow.NULL:
		return args[k], nil
	case arrow.TypeEqual(dt, Interval):
		return retype(args[k], Int64, mem), nil
	}
	return nil, fmt.Errorf("argument %d of %s must be a day-time interval, not %s: %w", k+1, f.Name, TypeName(dt), ErrType)
}

// bindDTResult binds a row kernel over args (already converted) whose
// int64 result is a day-time interval.
// Under try mode (try_add, try_subtract, try_multiply, try_divide) an
// overflow or a division by zero is NULL, as Spark's TryEval makes it.
func bindDTResult(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, kinds []rowKind, num func(a []rowArg, i int) (int64, bool, error)) (Evaluator, error) {
	if f.Mode == ModeTry {
		exact := num
		num = func(a []rowArg, i int) (int64, bool, error) {
			v, ok, err := exact(a, i)
			if err != nil {
				return 0, false, nil
			}
			return v, ok, nil
		}
	}
	ev, err := bindRows(f, in, mem, args, kinds, Int64, rowKernels{num: num})
	if err != nil {
		return nil, err
	}
	return retype(ev, Interval, mem), nil
}

// addExact is a + b, or an overflow error (Java's Math.addExact).
func addExact(a, b int64) (int64, bool, error) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false, errDTOverflow()
	}
	return s, true, nil
}

// subExact is a - b, or an overflow error (Math.subtractExact).
func subExact(a, b int64) (int64, bool, error) {
	d := a - b
	if (a >= 0 && b < 0 && d < 0) || (a < 0 && b > 0 && d >= 0) {
		return 0, false, errDTOverflow()
	}
	return d, true, nil
}

// DTAdd is l + r (sign 1) or l - r (sign -1) of two day-time intervals.
func DTAdd(l, r Expr, sign int64) Expr {
	name := "+"
	if sign < 0 {
		name = "-"
	}
	return &FuncExpr{Name: name, Args: []Expr{l, r}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := dtOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		b, err := dtOperand(f, args, 1, mem)
		if err != nil {
			return nil, err
		}
		op := addExact
		if sign < 0 {
			op = subExact
		}
		return bindDTResult(f, in, mem, []Evaluator{a, b}, []rowKind{rowInt, rowInt}, func(x []rowArg, i int) (int64, bool, error) {
			return op(x[0].int(i), x[1].int(i))
		})
	}}
}

// DTNegate is -x (abs false) or abs(x) of a day-time interval; the
// smallest interval has no negation and overflows.
func DTNegate(x Expr, abs bool) Expr {
	name := "negative"
	if abs {
		name = "abs"
	}
	return &FuncExpr{Name: name, Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := dtOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		return bindDTResult(f, in, mem, []Evaluator{a}, []rowKind{rowInt}, func(x []rowArg, i int) (int64, bool, error) {
			v := x[0].int(i)
			if abs && v >= 0 {
				return v, true, nil
			}
			if v == math.MinInt64 {
				return 0, false, errDTOverflow()
			}
			return -v, true, nil
		})
	}}
}

// DTMicros is the microseconds of a day-time interval as a bigint (for
// signum and div, which read intervals as their counts).
func DTMicros(x Expr) Expr {
	return &FuncExpr{Name: "micros", Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		return dtOperand(f, args, 0, mem)
	}}
}

// divLongHalfUp is p / q rounded to the nearest long, halves away from zero
// (Guava's LongMath.divide with HALF_UP); q is not 0.
func divLongHalfUp(p, q int64) (int64, bool, error) {
	if p == math.MinInt64 && q == -1 {
		return 0, false, &SparkError{Class: "ARITHMETIC_OVERFLOW", Err: ErrOverflow, Msg: "Overflow in integral divide"}
	}
	d, r := p/q, p%q
	if r == 0 {
		return d, true, nil
	}
	ar, aq := r, q
	if ar < 0 {
		ar = -ar
	}
	if aq < 0 {
		aq = -aq
	}
	if ar >= aq-ar { // the remainder is at least half of q
		if (p < 0) != (q < 0) {
			d--
		} else {
			d++
		}
	}
	return d, true, nil
}

// ratMicros is a big.Rat result rounded HALF_UP into microseconds.
func ratMicros(r *big.Rat) (int64, bool, error) {
	q := ratRoundHalfUp(r)
	if !q.IsInt64() {
		return 0, false, errDTOverflow()
	}
	return q.Int64(), true, nil
}

// floatMicros is a double result rounded HALF_UP into microseconds
// (Guava's DoubleMath.roundToLong); NaN and values beyond a long are
// errors.
func floatMicros(v float64) (int64, bool, error) {
	r := math.Round(v)
	if math.IsNaN(r) || r < -(1<<63) || r >= 1<<63 {
		return 0, false, errDTOverflow()
	}
	return int64(r), true, nil
}

// DTMultiply is x * num (div false) or x / num (div true) of a day-time
// interval: integers multiply exactly and divide rounding HALF_UP, doubles
// compute in double and decimals exactly, both rounded HALF_UP to whole
// microseconds. Division by zero is DIVIDE_BY_ZERO, a result beyond a long
// ARITHMETIC_OVERFLOW.
func DTMultiply(x, num Expr, div bool) Expr {
	name := "*"
	if div {
		name = "/"
	}
	return &FuncExpr{Name: name, Args: []Expr{x, num}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		a, err := dtOperand(f, args, 0, mem)
		if err != nil {
			return nil, err
		}
		nt := Unwrap(args[1].DataType())
		conv := []Evaluator{a, args[1]}
		switch {
		case nt.ID() == arrow.NULL || IsIntegral(nt):
			return bindDTResult(f, in, mem, conv, []rowKind{rowInt, rowInt}, func(x []rowArg, i int) (int64, bool, error) {
				m, n := x[0].int(i), x[1].int(i)
				if div {
					if n == 0 {
						return 0, false, errDivideByZero
					}
					return divLongHalfUp(m, n)
				}
				if m == 0 || n == 0 {
					return 0, true, nil
				}
				p := m * n
				if p/n != m || (m == -1 && n == math.MinInt64) || (n == -1 && m == math.MinInt64) {
					return 0, false, errDTOverflow()
				}
				return p, true, nil
			})
		case nt.ID() == arrow.DECIMAL128:
			return bindDTResult(f, in, mem, conv, []rowKind{rowInt, rowStr}, scaleByDecimal(div, ratMicros))
		case IsNumeric(nt) || IsStringLike(nt):
			return bindDTResult(f, in, mem, conv, []rowKind{rowInt, rowFloat}, scaleByFloat(div, floatMicros))
		}
		return nil, fmt.Errorf("cannot %s a day-time interval by %s: %w", map[bool]string{false: "multiply", true: "divide"}[div], TypeName(nt), ErrType)
	}}
}

// TimestampAddDT is ts + x (sign 1) or ts - x (sign -1) of a timestamp
// and a day-time interval that need not be a constant (a column): the
// microseconds are added, an overflow raises. A date or string ts is cast
// to a timestamp in the session time zone.
func TimestampAddDT(ts, x Expr, sign int64) Expr {
	name := "+"
	if sign < 0 {
		name = "-"
	}
	return &FuncExpr{Name: name, Args: []Expr{ts, x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		t := Unwrap(args[0].DataType())
		if t.ID() != arrow.NULL && !arrow.TypeEqual(t, Timestamp) && t.ID() != arrow.DATE32 && !IsStringLike(t) {
			return nil, fmt.Errorf("cannot add a day-time interval to %s: %w", TypeName(t), ErrType)
		}
		b, err := dtOperand(f, args, 1, mem)
		if err != nil {
			return nil, err
		}
		op := addExact
		if sign < 0 {
			op = subExact
		}
		return bindRows(f, in, mem, []Evaluator{args[0], b}, []rowKind{rowMicros, rowInt}, Timestamp, rowKernels{num: func(x []rowArg, i int) (int64, bool, error) {
			return op(x[0].int(i), x[1].int(i))
		}})
	}}
}

// scaleByDecimal is the row function of an interval (argument 0, in its
// unit) multiplied or divided by a decimal (argument 1, as its string),
// computed exactly and then fitted to the unit by fit (which rounds and
// checks the range as the interval kind requires).
func scaleByDecimal(div bool, fit func(*big.Rat) (int64, bool, error)) func(x []rowArg, i int) (int64, bool, error) {
	return func(x []rowArg, i int) (int64, bool, error) {
		d, ok := new(big.Rat).SetString(string(x[1].str(i)))
		if !ok {
			return 0, false, fmt.Errorf("%q is not a decimal: %w", x[1].str(i), ErrType)
		}
		m := new(big.Rat).SetInt64(x[0].int(i))
		if !div {
			return fit(m.Mul(m, d))
		}
		if d.Sign() == 0 {
			return 0, false, errDivideByZero
		}
		return fit(m.Quo(m, d))
	}
}

// scaleByFloat is scaleByDecimal for a floating-point (or numeric string)
// factor: the product or quotient in float64, fitted by fit.
func scaleByFloat(div bool, fit func(float64) (int64, bool, error)) func(x []rowArg, i int) (int64, bool, error) {
	return func(x []rowArg, i int) (int64, bool, error) {
		m, n := float64(x[0].int(i)), x[1].float(i)
		if !div {
			return fit(m * n)
		}
		if n == 0 {
			return 0, false, errDivideByZero
		}
		return fit(m / n)
	}
}
