package vector

import "math"

// javaPow is Java's Math.pow, which Spark's pow calls. Go's math.Pow
// agrees except where Java answers NaN: a NaN exponent with base 1 (Go
// gives 1), and base ±1 with an infinite exponent (Go gives 1).
func javaPow(x, y float64) float64 {
	if math.IsNaN(y) || (math.IsInf(y, 0) && math.Abs(x) == 1) {
		return math.NaN()
	}
	return math.Pow(x, y)
}
