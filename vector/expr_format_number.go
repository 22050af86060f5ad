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
func formatGrouped(dst []byte, r *big.Rat, d int64, neg bool) []byte {
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
	if d > 0 {
		dst = append(dst, '.')
		dst = append(dst, frac...)
	}
	return dst
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
			case math.IsNaN(v):
				return append(dst, "NaN"...), true, nil
			case math.IsInf(v, 1):
				return append(dst, "∞"...), true, nil
			case math.IsInf(v, -1):
				return append(dst, "-∞"...), true, nil
			}
			return formatGrouped(dst, new(big.Rat).SetFloat64(v), d, math.Signbit(v)), true, nil
		}})
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowInt}, String, rowKernels{str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		d := a[1].int(i)
		if d < 0 {
			return nil, false, nil
		}
		r, ok := new(big.Rat).SetString(string(a[0].str(i)))
		if !ok {
			return nil, false, fmt.Errorf("%q is not a number: %w", a[0].str(i), ErrType)
		}
		return formatGrouped(dst, r, d, r.Sign() < 0), true, nil
	}})
}

func init() {
	functions["format_number"] = funcSpec{2, 2, rowBinder("format_number", bindFormatNumber)}
}
