package vector

import (
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// bround(x[, scale]) is round with HALF_EVEN rounding (banker's
// rounding: bround(2.5) is 2, bround(3.5) is 4), with round's types: an
// int stays an int, a double a double (rounded on its shortest decimal
// text, as Spark's BigDecimal of a double), a DECIMAL(p,s) becomes
// DECIMAL(p-s+1+min(s,scale), min(s,scale)).

// halfEven divides b by 10^k (k > 0) rounding HALF_EVEN.
func halfEven(b *big.Int, k int64) *big.Int {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(k), nil)
	neg := b.Sign() < 0
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(b), p, new(big.Int))
	switch c := r.Lsh(r, 1).Cmp(p); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// bInt rounds v HALF_EVEN to a multiple of 10^-scale.
func bInt(v int64, scale int32) (int64, bool) {
	if scale >= 0 || v == 0 {
		return v, true
	}
	if -scale > 19 {
		return 0, true
	}
	q := halfEven(big.NewInt(v), int64(-scale))
	q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	return q.Int64(), q.IsInt64()
}

// bFloat rounds v HALF_EVEN at scale digits after the point.
func bFloat(v float64, scale int32) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	if scale >= -18 && scale <= 18 {
		p := math.Pow(10, float64(scale))
		y := math.Abs(v) * p
		if y < 1<<52 {
			if frac := y - math.Floor(y); math.Abs(frac-0.5) > 1e-6 {
				// Away from a half both roundings agree.
				return roundFloat(v, scale)
			}
		} else if scale >= 0 {
			return v
		}
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return v
	}
	// r = num/den; scaled by 10^scale, rounded half even, scaled back.
	pk := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(absInt32(scale)), nil))
	if scale >= 0 {
		r.Mul(r, pk)
	} else {
		r.Quo(r, pk)
	}
	neg := r.Sign() < 0
	r.Abs(r)
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	switch c := rem.Lsh(rem, 1).Cmp(r.Denom()); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
	}
	out := new(big.Rat).SetInt(q)
	if scale >= 0 {
		out.Quo(out, pk)
	} else {
		out.Mul(out, pk)
	}
	f, _ := out.Float64()
	if neg {
		f = -f
	}
	return f
}

// bDecimal rounds v (scale s) HALF_EVEN to scale digits, at scale
// max(scale, 0) (or s when scale >= s).
func bDecimal(v decimal128.Num, s, scale int32) (decimal128.Num, bool) {
	if scale >= s {
		return v, true
	}
	reduce := int64(s - scale)
	q := halfEven(v.BigInt(), reduce)
	if scale < 0 {
		q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	if q.BitLen() > 126 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(q), true
}

func init() {
	functions["bround"] = funcSpec{1, 2, func(a []Expr) Expr { return &FuncExpr{Name: "bround", Args: a, bind: bindBRound} }}
}
