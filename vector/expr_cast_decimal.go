package vector

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Casts from and to decimal(p,s). They work row by row on math/big values:
// decimals are rare in streaming queries and exactness matters more here
// than speed. Rounding is HALF_UP as Spark's changePrecision; overflow is an
// error (ANSI) except for strings, which become NULL.

// rowFunc converts the non-null value of row i.
type rowFunc func(c *castEval, arr arrow.Array, i int) (v any, null bool, err error)

// errRowOverflow is what a rowFunc returns for a value out of the target's
// range; rowKernel turns it into the row's CAST_OVERFLOW (or
// NUMERIC_VALUE_OUT_OF_RANGE) error under ANSI and NULL otherwise.
var errRowOverflow = errors.New("value out of range")

// rowKernel runs f over every non-null row and appends to a builder.
func rowKernel(f rowFunc) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		b := array.NewBuilder(c.mem, c.to)
		defer b.Release()
		b.Reserve(arr.Len())
		for i := 0; i < arr.Len(); i++ {
			if arr.IsNull(i) {
				b.AppendNull()
				continue
			}
			v, null, err := f(c, arr, i)
			switch {
			case err == errRowOverflow && c.mode != ModeANSI:
				null = true
			case err == errRowOverflow:
				return nil, c.overflowError(arr, i)
			case err != nil:
				return nil, c.rowError(arr, i, err)
			}
			if null {
				b.AppendNull()
				continue
			}
			if err := AppendValue(b, v); err != nil {
				return nil, err
			}
		}
		return b.NewArray(), nil
	}
}

var bigPow10 = func() []*big.Int {
	out := make([]*big.Int, 80)
	ten := big.NewInt(10)
	out[0] = big.NewInt(1)
	for i := 1; i < len(out); i++ {
		out[i] = new(big.Int).Mul(out[i-1], ten)
	}
	return out
}()

// rescaleBig changes the scale of an unscaled value; reducing the scale
// rounds half up (away from zero) or truncates toward zero. Differences of
// more than 79 digits give 0 (when reducing) or a value too large for any
// precision (when growing).
func rescaleBig(v *big.Int, from, to int32, halfUp bool) *big.Int {
	switch {
	case to == from:
		return new(big.Int).Set(v)
	case to > from:
		k := to - from
		if k >= int32(len(bigPow10)) {
			if v.Sign() == 0 {
				return new(big.Int)
			}
			return new(big.Int).Set(bigPow10[len(bigPow10)-1])
		}
		return new(big.Int).Mul(v, bigPow10[k])
	}
	k := from - to
	if k >= int32(len(bigPow10)) {
		return new(big.Int)
	}
	q, r := new(big.Int).QuoRem(v, bigPow10[k], new(big.Int))
	if halfUp && r.Sign() != 0 {
		r.Abs(r)
		r.Lsh(r, 1)
		if r.Cmp(bigPow10[k]) >= 0 {
			q.Add(q, big.NewInt(int64(v.Sign())))
		}
	}
	return q
}

// toDecimal checks that v fits precision p and converts it.
func toDecimal(v *big.Int, p int32) (decimal128.Num, bool) {
	if p < 1 || p > 38 || new(big.Int).Abs(v).Cmp(bigPow10[p]) >= 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(v), true
}

// parseBigDecimal parses Java's BigDecimal syntax ([sign]digits[.digits]
// [e[sign]digits], at least one digit) into an unscaled value and a scale.
func parseBigDecimal(s []byte) (*big.Int, int32, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	digits := make([]byte, 0, len(s))
	frac, seen, dot := 0, false, false
scan:
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			seen = true
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			break scan
		}
	}
	if !seen {
		return nil, 0, false
	}
	exp := int64(0)
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return nil, 0, false
		}
		i++
		e, ok := parseSparkExponent(s[i:])
		if !ok {
			return nil, 0, false
		}
		exp = e
	}
	scale := int64(frac) - exp
	if scale > 1<<20 || scale < -(1<<20) {
		// Far outside any precision: the caller sees overflow or zero.
		if scale > 0 {
			scale = 1 << 20
		} else {
			scale = -(1 << 20)
		}
	}
	v, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, 0, false
	}
	if neg {
		v.Neg(v)
	}
	return v, int32(scale), true
}

func parseSparkExponent(s []byte) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	neg := s[0] == '-'
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 10 {
		return 0, false
	}
	var e int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		e = e*10 + int64(c-'0')
	}
	if neg {
		e = -e
	}
	return e, true
}

// fitDecimal rescales (v, scale) to dt with HALF_UP and checks precision.
func fitDecimal(v *big.Int, scale int32, dt *arrow.Decimal128Type) (decimal128.Num, bool) {
	return toDecimal(rescaleBig(v, scale, dt.Scale, true), dt.Precision)
}

// stringToDecimal parses trimmed Java BigDecimal syntax. Under ANSI what
// does not parse is CAST_INVALID_INPUT and what does not fit
// CANNOT_CHANGE_DECIMAL_PRECISION; otherwise both are NULL.
func stringToDecimal(c *castEval, arr arrow.Array) (arrow.Array, error) {
	dt := c.to.(*arrow.Decimal128Type)
	offs, data := fnBinaryView(arr)
	return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
		b := data[offs[i]:offs[i+1]]
		k, j := 0, len(b)
		for k < j && b[k] <= ' ' {
			k++
		}
		for j > k && b[j-1] <= ' ' {
			j--
		}
		v, scale, ok := parseBigDecimal(b[k:j])
		if !ok {
			if c.mode == ModeANSI {
				return nil, false, errCastInvalid(FormatValue(string(b), String), String, c.to)
			}
			return nil, true, nil
		}
		n, ok := fitDecimal(v, scale, dt)
		if !ok && c.mode == ModeANSI {
			return nil, false, errDecimalPrecision(v, scale, dt)
		}
		return n, !ok, nil
	})(c, arr)
}

// decimalKernel covers every cast with a decimal on one side (except
// string ↔ decimal, see stringToDecimal and decimalToString).
func decimalKernel(from, to arrow.DataType) castKernel {
	overflow := func() error { return errRowOverflow }
	if from.ID() == arrow.DECIMAL128 {
		fs := from.(*arrow.Decimal128Type).Scale
		unscaled := func(arr arrow.Array, i int) *big.Int { return arr.(*array.Decimal128).Value(i).BigInt() }
		switch to.ID() {
		case arrow.DECIMAL128:
			dt := to.(*arrow.Decimal128Type)
			return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
				n, ok := fitDecimal(unscaled(arr, i), fs, dt)
				if !ok {
					return nil, false, overflow()
				}
				return n, false, nil
			})
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
				v := rescaleBig(unscaled(arr, i), fs, 0, false)
				if c.mode == ModeLegacy {
					// Spark 3 keeps the low bits (Decimal.toLong.toInt).
					return narrowInt(lowInt64(v), to.ID()), false, nil
				}
				if !v.IsInt64() || narrowInt(v.Int64(), to.ID()) != v.Int64() {
					return nil, false, overflow()
				}
				return v.Int64(), false, nil
			})
		case arrow.FLOAT32, arrow.FLOAT64:
			bitSize := 64
			if to.ID() == arrow.FLOAT32 {
				bitSize = 32 // BigDecimal.floatValue rounds once
			}
			return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
				s := formatDecimal(nil, arr.(*array.Decimal128).Value(i), fs)
				f, err := strconv.ParseFloat(string(s), bitSize)
				if err != nil {
					return nil, false, errRowOverflow
				}
				return f, false, nil
			})
		case arrow.BOOL:
			return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
				return arr.(*array.Decimal128).Value(i).Sign() != 0, false, nil
			})
		case arrow.TIMESTAMP:
			return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
				v := rescaleBig(unscaled(arr, i), fs, 6, false)
				if !v.IsInt64() {
					return nil, false, overflow()
				}
				return arrow.Timestamp(v.Int64()), false, nil
			})
		}
		return nil
	}
	dt, ok := to.(*arrow.Decimal128Type)
	if !ok {
		return nil
	}
	fit := func(v *big.Int, scale int32) (any, bool, error) {
		n, ok := fitDecimal(v, scale, dt)
		if !ok {
			return nil, false, overflow()
		}
		return n, false, nil
	}
	switch from.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
			x, _ := toInt64(ValueAt(arr, i))
			return fit(big.NewInt(x), 0)
		})
	case arrow.BOOL:
		return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
			x := int64(0)
			if arr.(*array.Boolean).Value(i) {
				x = 1
			}
			return fit(big.NewInt(x), 0)
		})
	case arrow.TIMESTAMP:
		return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
			return fit(big.NewInt(int64(arr.(*array.Timestamp).Value(i))), 6)
		})
	case arrow.FLOAT32, arrow.FLOAT64:
		bitSize := 64
		if from.ID() == arrow.FLOAT32 {
			bitSize = 32
		}
		return rowKernel(func(c *castEval, arr arrow.Array, i int) (any, bool, error) {
			f, _ := ValueAt(arr, i).(float64)
			// Spark goes through the shortest decimal form of the double.
			s := strconv.FormatFloat(f, 'e', -1, bitSize)
			v, scale, ok := parseBigDecimal([]byte(s))
			if !ok {
				// NaN and infinities have no decimal: NULL, also under
				// ANSI (Spark's Cast catches the NumberFormatException
				// of Decimal(NaN) whatever the mode).
				return nil, true, nil
			}
			return fit(v, scale)
		})
	}
	return nil
}

// formatDecimal appends n with scale digits after the point (plain
// notation, as Spark's toPlainString).
func formatDecimal(dst []byte, n decimal128.Num, scale int32) []byte {
	v := n.BigInt()
	if v.Sign() < 0 {
		dst = append(dst, '-')
		v.Neg(v)
	}
	digits := v.Append(nil, 10)
	if scale <= 0 {
		dst = append(dst, digits...)
		for k := int32(0); k < -scale; k++ {
			dst = append(dst, '0')
		}
		return dst
	}
	for int32(len(digits)) <= scale {
		digits = append([]byte{'0'}, digits...)
	}
	cut := len(digits) - int(scale)
	dst = append(dst, digits[:cut]...)
	dst = append(dst, '.')
	return append(dst, digits[cut:]...)
}

func decimalToString(c *castEval, arr arrow.Array) (arrow.Array, error) {
	dec := arr.(*array.Decimal128)
	scale := dec.DataType().(*arrow.Decimal128Type).Scale
	s := newStrOut(c.mem, arr.Len(), arr.Len()*8)
	for i := 0; i < arr.Len(); i++ {
		if arr.IsValid(i) {
			s.reserve(80)
			s.data = formatDecimal(s.data, dec.Value(i), scale)
		}
		s.next()
	}
	return stringResult(c, arr, s)
}

// errDecimalPrecision is Spark's CANNOT_CHANGE_DECIMAL_PRECISION for a
// string whose value (unscaled v with scale) does not fit dt.
func errDecimalPrecision(v *big.Int, scale int32, dt *arrow.Decimal128Type) error {
	digits := int32(len(new(big.Int).Abs(v).String()))
	p := max(digits, scale)
	n, _ := toDecimal(v, 38)
	return &SparkError{Class: "CANNOT_CHANGE_DECIMAL_PRECISION", Err: ErrOverflow, Msg: fmt.Sprintf(
		"Decimal(expanded, %s, %d, %d) cannot be represented as Decimal(%d, %d). %s",
		string(formatDecimal(nil, n, scale)), p, scale, dt.Precision, dt.Scale, ansiHint)}
}

// lowInt64 is the low 64 bits of v in two's complement.
func lowInt64(v *big.Int) int64 {
	if v.IsInt64() {
		return v.Int64()
	}
	m := new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0)))
	return int64(m.Uint64())
}

// narrowInt keeps the low bits of v that fit integer type id.
func narrowInt(v int64, id arrow.Type) int64 {
	switch id {
	case arrow.INT8:
		return int64(int8(v))
	case arrow.INT16:
		return int64(int16(v))
	case arrow.INT32:
		return int64(int32(v))
	}
	return v
}
