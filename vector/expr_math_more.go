package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Math functions of double arguments (numbers and numeric text are read
// as doubles, as Spark's implicit casts do) and integer operators: DIV,
// the bit operators, width_bucket.

// doubleFunc registers f(x) → double.
func doubleFunc(name string, fn func(float64) float64) func(args []Expr) Expr {
	return rowsFunc(name, []rowKind{rowFloat}, Float64, rowKernels{
		flt: func(a []rowArg, i int) (float64, bool, error) { return fn(a[0].float(i)), true, nil },
	})
}

// doubleFuncNull registers f(x) → double that is NULL where ok is false
// (ln of a non-positive number, for instance).
func doubleFuncNull(name string, fn func(float64) (float64, bool)) func(args []Expr) Expr {
	return rowsFunc(name, []rowKind{rowFloat}, Float64, rowKernels{
		flt: func(a []rowArg, i int) (float64, bool, error) {
			v, ok := fn(a[0].float(i))
			return v, ok, nil
		},
	})
}

// doubleFunc2 registers f(x, y) → double.
func doubleFunc2(name string, fn func(x, y float64) (float64, bool)) func(args []Expr) Expr {
	return rowsFunc(name, []rowKind{rowFloat, rowFloat}, Float64, rowKernels{
		flt: func(a []rowArg, i int) (float64, bool, error) {
			v, ok := fn(a[0].float(i), a[1].float(i))
			return v, ok, nil
		},
	})
}

func positiveLog(fn func(float64) float64) func(float64) (float64, bool) {
	return func(x float64) (float64, bool) {
		if x <= 0 {
			return 0, false
		}
		return fn(x), true
	}
}

// logBase is log(base, x): NULL when either is not positive.
func logBase(b, x float64) (float64, bool) {
	if b <= 0 || x <= 0 {
		return 0, false
	}
	return math.Log(x) / math.Log(b), true
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0, -0 and NaN keep themselves
}

// widthBucket is Spark's WidthBucket.computeBucketNumber.
func widthBucket(v, lo, hi float64, n int64) (int64, bool) {
	if n <= 0 || n == math.MaxInt64 || math.IsNaN(v) || lo == hi || math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return 0, false
	}
	lower, upper := min(lo, hi), max(lo, hi)
	if lo < hi {
		switch {
		case v < lower:
			return 0, true
		case v >= upper:
			return n + 1, true
		}
		return int64(float64(n)*(v-lower)/(upper-lower)) + 1, true
	}
	switch {
	case v > upper:
		return 0, true
	case v <= lower:
		return n + 1, true
	}
	return int64(float64(n)*(upper-v)/(upper-lower)) + 1, true
}

// bindWidthBucket binds width_bucket(v, min, max, n): the number of
// buckets is read as bigint (a decimal or double truncated, a string
// parsed), the bounds as doubles.
func bindWidthBucket(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if dt := Unwrap(args[3].DataType()); dt.ID() != arrow.NULL && !IsIntegral(dt) {
		if !IsNumeric(dt) && !IsStringLike(dt) {
			return nil, fmt.Errorf("%s must be a number, not %s: %w", f.Args[3], TypeName(dt), ErrType)
		}
		kern := castKernelFor(dt, Int64)
		if kern == nil {
			return nil, fmt.Errorf("%s cannot be read as a bigint: %w", f.Args[3], ErrType)
		}
		c := &castEval{child: args[3], from: args[3].DataType(), to: Int64, kern: kern, mem: mem, mode: ModeLegacy,
			expr: "CAST(" + f.Args[3].String() + " AS BIGINT)", operand: f.Args[3].String()}
		if IsStringLike(dt) {
			c.mode = f.Mode
		}
		args = append(append([]Evaluator(nil), args[:3]...), foldQuietly(c, mem, args[3]))
	}
	args, err := widthBucketIntervals(f, args, mem)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowFloat, rowFloat, rowFloat, rowInt}, Int64, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			v, ok := widthBucket(a[0].float(i), a[1].float(i), a[2].float(i), a[3].int(i))
			return v, ok, nil
		},
	})
}

// widthBucketIntervals lets width_bucket bucket intervals as Spark does:
// a value and bounds that are all year-month intervals are read as their
// months, all day-time intervals as their microseconds (NULLs mix with
// either). Intervals of different kinds, or with numbers, are a type
// error; numbers pass unchanged.
func widthBucketIntervals(f *FuncExpr, args []Evaluator, mem memory.Allocator) ([]Evaluator, error) {
	ym, dt, other := 0, 0, 0
	for _, a := range args[:3] {
		switch t := Unwrap(a.DataType()); {
		case t.ID() == arrow.NULL:
		case IsYearMonthInterval(t):
			ym++
		case arrow.TypeEqual(t, Interval):
			dt++
		default:
			other++
		}
	}
	if ym+dt == 0 {
		return args, nil
	}
	if ym > 0 && dt > 0 || other > 0 {
		return nil, fmt.Errorf("the value and bounds of width_bucket must be all numbers, all year-month intervals or all day-time intervals, not %s, %s and %s: %w",
			TypeName(args[0].DataType()), TypeName(args[1].DataType()), TypeName(args[2].DataType()), ErrType)
	}
	out := append([]Evaluator(nil), args...)
	for k, a := range args[:3] {
		switch t := Unwrap(a.DataType()); {
		case IsYearMonthInterval(t):
			out[k] = retype(a, Int32, mem)
		case arrow.TypeEqual(t, Interval):
			out[k] = retype(a, Int64, mem)
		}
	}
	return out, nil
}

// bindIntDiv binds a DIV b: integral division truncated toward zero, as
// bigint. Decimal operands are divided exactly and truncated; division by
// zero raises under ANSI and is NULL otherwise.
func bindIntDiv(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	for k, a := range args {
		dt := Unwrap(a.DataType())
		if dt.ID() != arrow.NULL && !IsIntegral(dt) {
			if dt.ID() != arrow.DECIMAL128 {
				return nil, fmt.Errorf("DIV needs integral or decimal operands, %s is %s: %w", f.Args[k], TypeName(dt), ErrType)
			}
		}
	}
	if Unwrap(args[0].DataType()).ID() == arrow.DECIMAL128 || Unwrap(args[1].DataType()).ID() == arrow.DECIMAL128 {
		// (a - a % b) / b is an integer exactly: a / b alone is rounded
		// to the quotient type's scale first (0.9999... to 1), and
		// Spark's DIV truncates the exact quotient.
		whole := &Arithmetic{Op: ArithSub, Left: f.Args[0], Right: &Arithmetic{Op: ArithMod, Left: f.Args[0], Right: f.Args[1], Mode: f.Mode}, Mode: f.Mode}
		q := &Arithmetic{Op: ArithDiv, Left: whole, Right: f.Args[1], Mode: f.Mode}
		ev, err := (&CastExpr{X: q, To: Int64, Mode: f.Mode}).Bind(in, mem)
		if err != nil {
			return nil, err
		}
		return ev, nil
	}
	mode := f.Mode
	return bindRows(f, in, mem, args, []rowKind{rowInt, rowInt}, Int64, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			x, y := a[0].int(i), a[1].int(i)
			if y == 0 {
				if mode == ModeANSI {
					return 0, false, fmt.Errorf("[DIVIDE_BY_ZERO] Division by zero: %w", ErrDivideByZero)
				}
				return 0, false, nil
			}
			if x == math.MinInt64 && y == -1 {
				if mode == ModeANSI {
					return 0, false, fmt.Errorf("[ARITHMETIC_OVERFLOW] long overflow in DIV: %w", ErrOverflow)
				}
				return math.MinInt64, true, nil
			}
			return x / y, true, nil
		},
	})
}

// bindBitOp binds a & b, a | b, a ^ b over integers of the wider operand
// type.
func bindBitOp(op byte) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		dt := arrow.DataType(Int8)
		for k, a := range args {
			t := Unwrap(a.DataType())
			if t.ID() == arrow.NULL {
				continue
			}
			if !IsIntegral(t) {
				return nil, fmt.Errorf("the bit operator %c needs integral operands, %s is %s: %w", op, f.Args[k], TypeName(t), ErrType)
			}
			if intWidth(t) > intWidth(dt) {
				dt = t
			}
		}
		if args[0].DataType().ID() == arrow.NULL && args[1].DataType().ID() == arrow.NULL {
			dt = Int32
		}
		return bindRows(f, in, mem, args, []rowKind{rowInt, rowInt}, dt, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				x, y := a[0].int(i), a[1].int(i)
				switch op {
				case '&':
					return x & y, true, nil
				case '|':
					return x | y, true, nil
				}
				return x ^ y, true, nil
			},
		})
	}
}

// bindBitNot binds ~a.
func bindBitNot(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	dt := Unwrap(args[0].DataType())
	if dt.ID() == arrow.NULL {
		dt = Int32
	} else if !IsIntegral(dt) {
		return nil, fmt.Errorf("~ needs an integral operand, %s is %s: %w", f.Args[0], TypeName(dt), ErrType)
	}
	return bindRows(f, in, mem, args, []rowKind{rowInt}, dt, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return ^a[0].int(i), true, nil },
	})
}

func intWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32:
		return 4
	}
	return 8
}

// bindShift binds shiftleft/shiftright/shiftrightunsigned(a, n): int or
// bigint a (smaller integers widen to int), the shift taken modulo the
// width as Java does.
func bindShift(kind byte) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		dt := Unwrap(args[0].DataType())
		if dt.ID() != arrow.INT64 {
			dt = Int32
		}
		wide := dt.ID() == arrow.INT64
		return bindRows(f, in, mem, args, []rowKind{rowInt, rowInt}, dt, rowKernels{
			num: func(a []rowArg, i int) (int64, bool, error) {
				x, n := a[0].int(i), a[1].int(i)
				if wide {
					s := uint(n & 63)
					switch kind {
					case 'l':
						return x << s, true, nil
					case 'r':
						return x >> s, true, nil
					}
					return int64(uint64(x) >> s), true, nil
				}
				v, s := int32(x), uint(n&31)
				switch kind {
				case 'l':
					return int64(v << s), true, nil
				case 'r':
					return int64(v >> s), true, nil
				}
				return int64(int32(uint32(v) >> s)), true, nil
			},
		})
	}
}

// factorial is factorial(n) for 0 <= n <= 20, NULL otherwise.
func factorial(a []rowArg, i int) (int64, bool, error) {
	n := a[0].int(i)
	if n < 0 || n > 20 {
		return 0, false, nil
	}
	v := int64(1)
	for k := int64(2); k <= n; k++ {
		v *= k
	}
	return v, true, nil
}
