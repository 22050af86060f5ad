package vector

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// The day-time interval kernels' exact arithmetic against big-number
// models: addExact/subExact overflow exactly when the true sum leaves a
// long, divLongHalfUp rounds the true quotient half away from zero.
func TestDTExactArithmeticModel(t *testing.T) {
	r := rand.New(rand.NewSource(20))
	edge := []int64{0, 1, -1, 2, -2, 3, 7, -7, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 86_400_000_000, -86_400_000_000}
	pick := func() int64 {
		switch r.Intn(3) {
		case 0:
			return edge[r.Intn(len(edge))]
		case 1:
			return r.Int63n(2001) - 1000
		}
		return int64(r.Uint64())
	}
	fits := func(b *big.Int) bool { return b.IsInt64() }
	for i := 0; i < 200_000; i++ {
		a, b := pick(), pick()
		sum := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
		if got, ok, err := addExact(a, b); fits(sum) != (err == nil) || (err == nil && (!ok || got != sum.Int64())) {
			t.Fatalf("addExact(%d, %d) = %d, %v; want %s", a, b, got, err, sum)
		}
		diff := new(big.Int).Sub(big.NewInt(a), big.NewInt(b))
		if got, ok, err := subExact(a, b); fits(diff) != (err == nil) || (err == nil && (!ok || got != diff.Int64())) {
			t.Fatalf("subExact(%d, %d) = %d, %v; want %s", a, b, got, err, diff)
		}
		if b == 0 {
			continue
		}
		want := ratRoundHalfUp(new(big.Rat).SetFrac(big.NewInt(a), big.NewInt(b)))
		got, _, err := divLongHalfUp(a, b)
		if fits(want) != (err == nil) || (err == nil && got != want.Int64()) {
			t.Fatalf("divLongHalfUp(%d, %d) = %d, %v; want %s", a, b, got, err, want)
		}
	}
}
