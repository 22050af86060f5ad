package vector

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// format_number(x, d) renders the number x rounded HALF_EVEN to d
// decimal places with grouping commas, as Java's DecimalFormat
// "#,###,##0.00..." that Spark uses: 12332.123456, 4 is '12,332.1235'. A
// double is rounded on its exact binary value (as the JDK does), a
// negative d gives NULL. The pattern form (d a format string) is not
// supported.

// formatGrouped renders r rounded HALF_EVEN to d places, grouped; a
// negative r keeps its sign when it rounds to zero ("-0.00"), as
// DecimalFormat does.
//
// r's denominator is 2^a·5^b (a double, or a decimal string), so its exact
// expansion has max(a, b) ≤ the denominator's bit length fractional
// digits: places past that are zeros, appended without computing 10^d
// (format_number(1.5, 1000000000) raised 10 to the 10^9 and printed a
// number of 10^9 digits, minutes of one core that no cancel reached).
func formatGrouped(dst []byte, r *big.Rat, d int64, neg bool) []byte {
	pad := int64(0)
	if exact := int64(r.Denom().BitLen()); d > exact {
		pad, d = d-exact, exact
	}
	scaled := new(big.Rat).Abs(r)
	scaled.Mul(scaled, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(d), nil)))
	q, rem := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	switch c := rem.Lsh(rem, 1).Cmp(scaled.Denom()); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	for int64(len(digits)) <= d {
		digits = "0" + digits
	}
	whole, frac := digits[:int64(len(digits))-d], digits[int64(len(digits))-d:]
	if neg {
		dst = append(dst, '-')
	}
	for i := 0; i < len(whole); i++ {
		if i > 0 && (len(whole)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, whole[i])
	}
	if d+pad > 0 {
		dst = append(dst, '.')
		dst = append(dst, frac...)
		for ; pad > 0; pad-- {
			dst = append(dst, '0')
		}
	}
	return dst
}

// formatNumberSize bounds the bytes of format_number's value with d places
// and a whole part of at most whole digits (grouped, signed), so that the
// value is checked against the query's account before it is built; past
// maxValueBytes the kernel refuses the row.
func formatNumberSize(d, whole int64) int64 {
	if d < 0 {
		return 0
	}
	if d > maxValueBytes {
		return d
	}
	return d + whole*4/3 + 3
}

// checkPlaces refuses a value that could not be held.
func checkPlaces(d int64) error {
	if d > maxValueBytes {
		return fmt.Errorf("format_number: %d decimal places exceed the limit of %d bytes for a value: %w", d, maxValueBytes, ErrOverflow)
	}
	return nil
}

func bindFormatNumber(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	xt, dt := Unwrap(args[0].DataType()), Unwrap(args[1].DataType())
	if dt.ID() != arrow.NULL && !IsIntegral(dt) {
		return nil, fmt.Errorf("the decimal places of format_number must be an int (a format pattern is not supported), not %s: %w", TypeName(dt), ErrType)
	}
	if xt.ID() != arrow.NULL && !IsNumeric(xt) {
		return nil, fmt.Errorf("format_number needs a number, not %s: %w", TypeName(xt), ErrType)
	}
	if xt.ID() == arrow.FLOAT32 || xt.ID() == arrow.FLOAT64 {
		return bindRows(f, in, mem, args, []rowKind{rowFloat, rowInt}, String, rowKernels{str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			v, d := a[0].float(i), a[1].int(i)
			switch {
			case d < 0:
				return nil, false, nil
			case d > maxValueBytes:
				return nil, false, checkPlaces(d)
			case math.IsNaN(v):
				return append(dst, "NaN"...), true, nil
			case math.IsInf(v, 1):
				return append(dst, "∞"...), true, nil
			case math.IsInf(v, -1):
				return append(dst, "-∞"...), true, nil
			}
			return formatGrouped(dst, new(big.Rat).SetFloat64(v), d, math.Signbit(v)), true, nil
		}, size: func(a []rowArg, i int) int64 { return formatNumberSize(a[1].int(i), 309) }})
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowInt}, String, rowKernels{str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		d := a[1].int(i)
		if d < 0 {
			return nil, false, nil
		}
		if err := checkPlaces(d); err != nil {
			return nil, false, err
		}
		r, ok := new(big.Rat).SetString(string(a[0].str(i)))
		if !ok {
			return nil, false, fmt.Errorf("%q is not a number: %w", a[0].str(i), ErrType)
		}
		return formatGrouped(dst, r, d, r.Sign() < 0), true, nil
	}, size: func(a []rowArg, i int) int64 { return formatNumberSize(a[1].int(i), int64(len(a[0].str(i)))) }})
}

func init() {
	functions["format_number"] = funcSpec{2, 2, rowBinder("format_number", bindFormatNumber)}
}
