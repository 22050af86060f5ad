package sparksql

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// Pairs of doubles and Java 17's Double.toString (as Spark's golden files
// print them) where the digits are not the shortest: 2^62 (try_avg in
// try_aggregates.sql) and 1e23, whose symmetric stopping test lands
// exactly on a tie that the long path does not take (JDK-4511638).
func TestJavaDoubleNotShortest(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits int
		want string
	}{
		{math.Ldexp(1, 62), 64, "4.6116860184273879E18"},
		{1.2345678901234568e48, 64, "1.2345678901234568E48"},
		{123456789123456789, 64, "1.23456789123456784E17"},
		{1e23, 64, "9.999999999999999E22"}, {-2e-3, 64, "-0.002"}, {4.9e-324, 64, "4.9E-324"},
		{math.MaxFloat64, 64, "1.7976931348623157E308"}, {2.2250738585072014e-308, 64, "2.2250738585072014E-308"},
		{float64(float32(1.2345679e20)), 32, "1.2345679E20"}, {float64(math.SmallestNonzeroFloat32), 32, "1.4E-45"},
		{float64(float32(math.MaxFloat32)), 32, "3.4028235E38"},
	} {
		if got := JavaDouble(c.v, c.bits); got != c.want {
			t.Errorf("JavaDouble(%v, %d) = %s, want %s", c.v, c.bits, got, c.want)
		}
	}
}

// Every output reads back as the value it printed and has at most 18
// significant digits (the algorithm may print one more than the 17 a
// double needs).
func TestJavaDoubleReadsBack(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50000; i++ {
		v := math.Float64frombits(rng.Uint64())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		s := JavaDouble(v, 64)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != v {
			t.Fatalf("JavaDouble(%v) = %s, reads back as %v (%v)", v, s, back, err)
		}
		f := float32(v)
		if math.IsInf(float64(f), 0) {
			continue
		}
		s = JavaDouble(float64(f), 32)
		b32, err := strconv.ParseFloat(s, 32)
		if err != nil || float32(b32) != f {
			t.Fatalf("JavaDouble(%v, 32) = %s, reads back as %v (%v)", f, s, b32, err)
		}
	}
}
