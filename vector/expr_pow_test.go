package vector

import (
	"math"
	"testing"
)

// TestJavaPow checks javaPow against Java's Math.pow special cases (its
// documented rules), including where Go's math.Pow differs.
func TestJavaPow(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct{ x, y, want float64 }{
		{1, nan, nan}, {-1, inf, nan}, {1, -inf, nan}, {-1, -inf, nan},
		{nan, 0, 1}, {nan, math.Copysign(0, -1), 1}, {2, nan, nan}, {nan, 1, nan},
		{2, 10, 1024}, {-8, 1.0 / 3, nan}, {0, -1, inf}, {2, inf, inf}, {0.5, inf, 0},
	} {
		got := javaPow(c.x, c.y)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("pow(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
