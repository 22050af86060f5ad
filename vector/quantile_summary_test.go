package vector

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// gkOf builds the summary of vals split into parts partial summaries
// merged in order, as partitions of a query are.
func gkOf(vals []float64, relErr float64, parts int) *gkSummary {
	sums := make([]*gkSummary, parts)
	for i := range sums {
		sums[i] = newGKSummary(relErr)
	}
	for i, v := range vals {
		sums[i*parts/len(vals)].insert(v)
	}
	for _, s := range sums[1:] {
		// Through the serialized state, as partial aggregation passes it.
		o, err := decodeGKSummary(s.appendBinary(nil))
		if err != nil {
			panic(err)
		}
		sums[0].merge(o)
	}
	return sums[0]
}

// TestGKExactBelowThreshold: while 2·ε·n stays below 1 no sample gets
// an uncertainty and nothing is compressed away, and percentile_approx answers exactly Spark's rank
// ceil(p·n) of the sorted values (the least value for p <= ε, the
// greatest for p >= 1-ε), however the rows were split and merged.
func TestGKExactBelowThreshold(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 200; iter++ {
		relErr := []float64{1e-4, 1e-3, 0.01}[rng.Intn(3)]
		n := 1 + rng.Intn(int(1/(2*relErr))-1)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(rng.Intn(n))
		}
		s := gkOf(vals, relErr, 1+rng.Intn(4))
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		pcts := []float64{0, rng.Float64(), rng.Float64(), 0.5, 1, relErr, 1 - relErr}
		got := s.query(pcts)
		for i, p := range pcts {
			var want float64
			switch {
			case p <= relErr:
				want = sorted[0]
			case p >= 1-relErr:
				want = sorted[n-1]
			default:
				want = sorted[int(math.Ceil(p*float64(n)))-1]
			}
			if got[i] != want {
				t.Fatalf("n=%d ε=%v p=%v: got %v, want %v", n, relErr, p, got[i], want)
			}
		}
	}
}

// TestGKErrorBound: beyond the threshold (compression, head buffer
// flushes, merges), the answer's rank is within ε·n of ceil(p·n).
func TestGKErrorBound(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for _, tc := range []struct {
		n      int
		relErr float64
		parts  int
	}{{120000, 0.01, 1}, {120000, 0.001, 3}, {60000, 0.0005, 2}, {30000, 0.01, 5}} {
		vals := make([]float64, tc.n)
		for i := range vals {
			vals[i] = math.Round(rng.NormFloat64()*1000) / 4
		}
		s := gkOf(vals, tc.relErr, tc.parts)
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		var pcts []float64
		for p := 0.0; p <= 1; p += 0.01 {
			pcts = append(pcts, p)
		}
		got := s.query(pcts)
		bound := tc.relErr * float64(tc.n)
		for i, p := range pcts {
			lo := sort.SearchFloat64s(sorted, got[i])                                      // values below
			hi := sort.Search(len(sorted), func(k int) bool { return sorted[k] > got[i] }) // values up to
			r := math.Max(1, math.Ceil(p*float64(tc.n)))
			if float64(lo+1)-bound > r || float64(hi)+bound < r {
				t.Errorf("n=%d ε=%v p=%.2f: %v has ranks [%d, %d], want within %v of %v", tc.n, tc.relErr, p, got[i], lo+1, hi, bound, r)
			}
		}
		if len(s.sampled) >= tc.n/2 {
			t.Errorf("n=%d ε=%v: %d samples kept, the summary did not compress", tc.n, tc.relErr, len(s.sampled))
		}
	}
}

// TestGKStateRefused: a truncated state is an error, not a panic.
func TestGKStateRefused(t *testing.T) {
	b := gkOf([]float64{1, 2, 3}, 0.01, 1).appendBinary(nil)
	for _, cut := range []int{0, 10, 19, len(b) - 1} {
		if _, err := decodeGKSummary(b[:cut]); err == nil {
			t.Errorf("a state cut at %d bytes decoded", cut)
		}
	}
}

// FuzzGKSummaryDecode: a percentile_approx state of any bytes decodes or
// is refused, and a decoded one answers and merges without panicking.
func FuzzGKSummaryDecode(f *testing.F) {
	f.Add(gkOf([]float64{1, 2, 3, 5, 8}, 0.01, 2).appendBinary(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeGKSummary(b)
		if err != nil {
			return
		}
		s.query([]float64{0, 0.3, 0.5, 1})
		o := gkOf([]float64{4, 2}, 0.01, 1)
		o.merge(s)
		o.query([]float64{0.5})
	})
}
