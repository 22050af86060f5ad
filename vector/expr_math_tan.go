package vector

import (
	"math"
	"math/big"
)

// Java's Math.tan (fdlibm) is correctly rounded where Go's math.Tan can be
// one unit in the last place off (tan(1) is 1.5574077246549023 in Java,
// 1.557407724654902 in Go), and Spark's cot is 1 / Math.tan. tanExact
// computes tan in 128-bit arithmetic and rounds once, so that cot answers
// exactly as Spark.

// piBig is π to 60 digits, enough to reduce |x| < 2^40 exactly.
var piBig, _ = new(big.Float).SetPrec(256).SetString("3.14159265358979323846264338327950288419716939937510582097494")

const tanPrec = 160

// tanExact is tan(x) rounded once to a double; outside |x| < 2^40 (and for
// NaN and infinities) it is math.Tan.
func tanExact(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1<<40 || x == 0 {
		return math.Tan(x)
	}
	bx := new(big.Float).SetPrec(tanPrec).SetFloat64(x)
	// r = x - k·π with k the nearest integer to x/π.
	k := math.Round(x / math.Pi)
	r := new(big.Float).SetPrec(tanPrec).Mul(new(big.Float).SetPrec(tanPrec).SetFloat64(k), piBig)
	r.Sub(bx, r)
	// sin and cos of r by their Taylor series (|r| <= π/2 + ε).
	r2 := new(big.Float).SetPrec(tanPrec).Mul(r, r)
	sin := new(big.Float).SetPrec(tanPrec).Set(r)
	cos := new(big.Float).SetPrec(tanPrec).SetInt64(1)
	termS := new(big.Float).SetPrec(tanPrec).Set(r)
	termC := new(big.Float).SetPrec(tanPrec).SetInt64(1)
	for n := int64(1); n < 40; n++ {
		termS.Mul(termS, r2)
		termS.Quo(termS, new(big.Float).SetInt64((2*n)*(2*n+1)))
		termS.Neg(termS)
		sin.Add(sin, termS)
		termC.Mul(termC, r2)
		termC.Quo(termC, new(big.Float).SetInt64((2*n-1)*(2*n)))
		termC.Neg(termC)
		cos.Add(cos, termC)
	}
	if cos.Sign() == 0 {
		return math.Tan(x)
	}
	t, _ := new(big.Float).SetPrec(tanPrec).Quo(sin, cos).Float64()
	return t
}
