package vector

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Decimal arithmetic with Spark's result types (allowPrecisionLoss=true)
// and ANSI overflow errors.
//
// + - and * whose natural result precision is at most 38 run on 128-bit
// integers: with operands within their declared precision the result can
// not wrap, and a per-row precision check catches what does not fit. The
// other cases (a result precision capped at 38, which needs rounding, and
// every / and %) go through math/big per row, reproducing Spark's
// java.math.BigDecimal steps: * rounds to 38 significant digits, / divides
// to scale 38, both HALF_UP, then the result is rounded HALF_UP to the
// result scale. That path is correct but slow (about a microsecond a row).

const maxDecimalPrecision = 38

// adjustPrecisionScale caps a decimal type at precision 38, giving up
// fractional digits (down to at least 6, or the original scale if
// smaller) to keep the integral ones, as Spark's
// DecimalType.adjustPrecisionScale.
func adjustPrecisionScale(p, s int32) (int32, int32) {
	if p <= maxDecimalPrecision {
		return p, s
	}
	intDigits := p - s
	minScale := min(s, 6)
	return maxDecimalPrecision, max(maxDecimalPrecision-intDigits, minScale)
}

// decimalArithType is Spark's result type of decimal(p1,s1) op
// decimal(p2,s2).
func decimalArithType(op ArithOp, p1, s1, p2, s2 int32) (int32, int32) {
	var p, s int32
	switch op {
	case ArithAdd, ArithSub:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case ArithMul:
		s = s1 + s2
		p = p1 + p2 + 1
	case ArithDiv:
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case ArithMod:
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	return adjustPrecisionScale(max(p, 1), s)
}

// decimalOperandType is the decimal type an operand takes part in decimal
// arithmetic as: its own type, or for an integer the digits of its type
// (literals: of their value, as Spark's literalPickMinimumPrecision).
func decimalOperandType(ev Evaluator, dt arrow.DataType) *arrow.Decimal128Type {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return d
	}
	if v, ok := constValue(ev); ok && v != nil {
		i, _ := toInt64(v)
		digits := int32(len(strconv.FormatUint(absUint64(i), 10)))
		return Decimal(digits, 0).(*arrow.Decimal128Type)
	}
	return Decimal(integralDigits(dt), 0).(*arrow.Decimal128Type)
}

func absUint64(i int64) uint64 {
	if i < 0 {
		return uint64(-(i + 1)) + 1
	}
	return uint64(i)
}

// decimalFromInt converts an integer to decimal type dt; false when it
// does not fit.
func decimalFromInt(v int64, dt *arrow.Decimal128Type) (decimal128.Num, bool) {
	if intDigits := dt.Precision - dt.Scale; intDigits <= 18 {
		lim := int64(1)
		for range intDigits {
			lim *= 10
		}
		if v <= -lim || v >= lim {
			return decimal128.Num{}, false
		}
	}
	// |v| < 10^(p-s), so v * 10^s < 10^38 cannot wrap.
	return decimal128.FromI64(v).Mul(decimal128.GetScaleMultiplier(int(dt.Scale))), true
}

// decimalRescale moves n from scale from to scale to, rounding HALF_UP when
// the scale shrinks; false when the result would not fit 38 digits.
func decimalRescale(n decimal128.Num, from, to int32) (decimal128.Num, bool) {
	switch {
	case to == from:
		return n, true
	case to > from:
		k := to - from
		if k > maxDecimalPrecision || !n.Abs().Less(decimal128.GetScaleMultiplier(int(maxDecimalPrecision-k))) {
			return decimal128.Num{}, false
		}
		return n.Mul(decimal128.GetScaleMultiplier(int(k))), true
	}
	var b decimalBig
	x := b.set(&b.x, n)
	roundHalfUp(x, int(from-to), &b.t)
	return decimal128.FromBigInt(x), true
}

// decimalToFloat64 converts exactly-rounded: a division of two exact
// doubles when the unscaled value and the power of ten are exact in a
// double, else through the decimal string.
func decimalToFloat64(n decimal128.Num, scale int32) float64 {
	if v := int64(n.LowBits()); n.HighBits() == v>>63 && v > -(1<<53) && v < 1<<53 && scale >= 0 && scale <= 22 {
		return float64(v) / pow10Float[scale]
	}
	f, _ := strconv.ParseFloat(decimalString(n, scale), 64)
	return f
}

var pow10Float = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalString renders n at scale exactly ("-1.50").
func decimalString(n decimal128.Num, scale int32) string {
	s := n.BigInt().String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		if len(s) <= int(scale) {
			s = strings.Repeat("0", int(scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// decimalBig holds the scratch big.Ints of the slow path, so that it does
// not allocate per row.
type decimalBig struct {
	x, y, q, r, t big.Int
}

// set stores n into z and returns z.
func (b *decimalBig) set(z *big.Int, n decimal128.Num) *big.Int {
	neg := n.Sign() < 0
	if neg {
		n = n.Negate()
	}
	z.SetUint64(uint64(n.HighBits()))
	z.Lsh(z, 64)
	z.Or(z, b.t.SetUint64(n.LowBits()))
	if neg {
		z.Neg(z)
	}
	return z
}

var bigTen = big.NewInt(10)

// pow10Big returns 10^k in t.
func pow10Big(t *big.Int, k int) *big.Int {
	return t.Exp(bigTen, big.NewInt(int64(k)), nil)
}

// roundHalfUp divides x by 10^k in place, rounding half away from zero
// (Java's HALF_UP); t is scratch.
func roundHalfUp(x *big.Int, k int, t *big.Int) {
	if k <= 0 {
		return
	}
	neg := x.Sign() < 0
	d := pow10Big(t, k)
	var r big.Int
	x.QuoRem(x, d, &r)
	r.Abs(&r)
	r.Lsh(&r, 1)
	if r.Cmp(d) >= 0 {
		if neg {
			x.Sub(x, bigOne)
		} else {
			x.Add(x, bigOne)
		}
	}
}

var bigOne = big.NewInt(1)

// decimalArithEval runs + - * / % on decimal operands.
type decimalArithEval struct {
	binaryBase
	op       ArithOp
	dt       *arrow.Decimal128Type
	mode     EvalMode
	s1, s2   int32
	fast     bool           // 128-bit kernel (see the file comment)
	m1, m2   decimal128.Num // + -: multipliers to the common scale
	limit    decimal128.Num // 10^precision
	negLimit decimal128.Num
	big      decimalBig
}

func newDecimalArith(op ArithOp, mode EvalMode, base binaryBase, l, r, dt *arrow.Decimal128Type) Evaluator {
	e := &decimalArithEval{binaryBase: base, op: op, mode: mode, dt: dt, s1: l.Scale, s2: r.Scale}
	e.limit = decimal128.GetScaleMultiplier(int(dt.Precision))
	e.negLimit = e.limit.Negate()
	switch op {
	case ArithAdd, ArithSub:
		s := max(l.Scale, r.Scale)
		e.fast = max(l.Precision-l.Scale, r.Precision-r.Scale)+s+1 <= maxDecimalPrecision
		e.m1 = decimal128.GetScaleMultiplier(int(s - l.Scale))
		e.m2 = decimal128.GetScaleMultiplier(int(s - r.Scale))
	case ArithMul:
		e.fast = l.Scale+r.Scale == dt.Scale && l.Precision+r.Precision+1 <= maxDecimalPrecision
	}
	return e
}

func (e *decimalArithEval) DataType() arrow.DataType { return e.dt }

func (e *decimalArithEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	la, ra, err := e.operands(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer releaseAll(la, ra)
	n := int(rec.NumRows())
	x, y := operandOf[decimal128.Num](la, e.lv), operandOf[decimal128.Num](ra, e.rv)
	validity, nulls := andValidity(e.mem, n, la, ra)
	var valid []byte // nil: every row is valid
	if validity != nil {
		valid = validity.Bytes()
	}
	buf, out := newValues[decimal128.Num](e.mem, n)
	fail := func(row int, err error) (arrow.Array, error) {
		buf.Release()
		if validity != nil {
			validity.Release()
		}
		return nil, e.evalError(row, err, la, ra)
	}
	if e.fast {
		if row := e.fastKernel(x, y, out, valid); row >= 0 {
			if e.mode == ModeANSI {
				return fail(row, errDecimalOverflow(out[row], e.dt))
			}
			buf.Release()
			if validity != nil {
				validity.Release()
			}
			return e.rowByRow(x, y, la, ra, n), nil
		}
	} else {
		for i := range out {
			out[i] = decimal128.Num{}
			if valid != nil && !bitutil.BitIsSet(valid, i) {
				continue
			}
			a, b := x.at(i), y.at(i)
			zero := (e.op == ArithDiv || e.op == ArithMod) && b == (decimal128.Num{})
			if zero && e.mode == ModeANSI {
				return fail(i, errDivideByZero)
			}
			v, ok := decimal128.Num{}, false
			if !zero {
				v, ok = e.slow(a, b)
			}
			if !ok && e.mode == ModeANSI {
				return fail(i, errDecimalOverflow(v, e.dt))
			}
			if !ok {
				buf.Release()
				if validity != nil {
					validity.Release()
				}
				return e.rowByRow(x, y, la, ra, n), nil
			}
			out[i] = v
		}
	}
	return newArrayOwning(e.dt, n, buf, validity, nulls), nil
}

// rowByRow computes a batch outside ANSI once a row failed: rows with a
// zero divisor or a result that does not fit are NULL.
func (e *decimalArithEval) rowByRow(x, y operand[decimal128.Num], la, ra arrow.Array, n int) arrow.Array {
	buf, out := newValues[decimal128.Num](e.mem, n)
	v := newValidityOut(e.mem, n, la, ra)
	for i := 0; i < n; i++ {
		out[i] = decimal128.Num{}
		if !v.valid(i) {
			continue
		}
		a, b := x.at(i), y.at(i)
		if (e.op == ArithDiv || e.op == ArithMod) && b == (decimal128.Num{}) {
			v.setNull(i)
			continue
		}
		r, ok := e.slow(a, b)
		if !ok {
			v.setNull(i)
			continue
		}
		out[i] = r
	}
	bm, nulls := v.finish()
	return newArrayOwning(e.dt, n, buf, bm, nulls)
}

// errDecimalOverflow is NUMERIC_VALUE_OUT_OF_RANGE for a decimal result
// that does not fit dt (Spark names no value when it cannot represent it).
func errDecimalOverflow(_ decimal128.Num, dt *arrow.Decimal128Type) error {
	return &SparkError{Class: "NUMERIC_VALUE_OUT_OF_RANGE", Err: ErrOverflow, Msg: fmt.Sprintf(
		"The result of the decimal operation cannot be represented as Decimal(%d, %d). %s", dt.Precision, dt.Scale, ansiHint)}
}

// fastKernel runs + - * in 128 bits and returns the first valid row whose
// result does not fit the precision, or -1.
func (e *decimalArithEval) fastKernel(x, y operand[decimal128.Num], out []decimal128.Num, valid []byte) int {
	var bad uint64
	for i := range out {
		a, b := x.at(i), y.at(i)
		var v decimal128.Num
		switch e.op {
		case ArithAdd:
			v = a.Mul(e.m1).Add(b.Mul(e.m2))
		case ArithSub:
			v = a.Mul(e.m1).Sub(b.Mul(e.m2))
		default:
			v = a.Mul(b)
		}
		out[i] = v
		bad |= b2u(!v.Less(e.limit) || !e.negLimit.Less(v))
	}
	if bad == 0 {
		return -1
	}
	for i, v := range out {
		if (!v.Less(e.limit) || !e.negLimit.Less(v)) && (valid == nil || bitutil.BitIsSet(valid, i)) {
			return i
		}
	}
	return -1
}

// slow computes one row with math/big; false on overflow.
func (e *decimalArithEval) slow(a, b decimal128.Num) (decimal128.Num, bool) {
	z := &e.big
	x, y, t := z.set(&z.x, a), z.set(&z.y, b), &z.t
	scale := int(max(e.s1, e.s2))
	switch e.op {
	case ArithAdd, ArithSub, ArithMod:
		// Bring both to the larger scale: exact.
		x.Mul(x, pow10Big(t, scale-int(e.s1)))
		y.Mul(y, pow10Big(t, scale-int(e.s2)))
		switch e.op {
		case ArithAdd:
			x.Add(x, y)
		case ArithSub:
			x.Sub(x, y)
		default:
			x.Rem(x, y) // truncated: the sign of the dividend, as Java
		}
	case ArithMul:
		x.Mul(x, y)
		scale = int(e.s1 + e.s2)
		// BigDecimal.multiply(MathContext(38, HALF_UP)): round to 38
		// significant digits first.
		if d := len(new(big.Int).Abs(x).String()); d > maxDecimalPrecision {
			roundHalfUp(x, d-maxDecimalPrecision, t)
			scale -= d - maxDecimalPrecision
		}
	case ArithDiv:
		// BigDecimal.divide(y, 38, HALF_UP) on the unscaled values:
		// x/10^s1 ÷ y/10^s2 at scale 38 = x * 10^(38+s2-s1) / y.
		x.Mul(x, pow10Big(t, maxDecimalPrecision+int(e.s2)-int(e.s1)))
		divHalfUp(x, y, &z.q, &z.r)
		scale = maxDecimalPrecision
	}
	if target := int(e.dt.Scale); scale > target {
		roundHalfUp(x, scale-target, t)
	} else if scale < target {
		x.Mul(x, pow10Big(t, target-scale))
	}
	if x.CmpAbs(pow10Big(t, int(e.dt.Precision))) >= 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(x), true
}

// divHalfUp sets x to x/y rounded half away from zero; q and r are
// scratch.
func divHalfUp(x, y, q, r *big.Int) {
	q.QuoRem(x, y, r)
	r.Abs(r)
	r.Lsh(r, 1)
	if r.CmpAbs(y) >= 0 {
		if x.Sign()*y.Sign() < 0 {
			q.Sub(q, bigOne)
		} else {
			q.Add(q, bigOne)
		}
	}
	x.Set(q)
}
