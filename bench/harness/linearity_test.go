package harness

import (
	"math"
	"testing"
)

func TestSeriesSpread(t *testing.T) {
	for _, tc := range []struct {
		costs []float64
		want  float64
	}{
		{nil, 0},
		{[]float64{100}, 0},
		{[]float64{100, 100, 100}, 0},
		{[]float64{80, 100, 125}, 0.25},
		{[]float64{100, 100, 100, 100, 300}, 2},
		{[]float64{50, 100, 100}, 0.5},
	} {
		var s Series
		for i, c := range tc.costs {
			s.Add(1000*(i+1), c)
		}
		if got := s.Spread(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Spread(%v) = %v, want %v", tc.costs, got, tc.want)
		}
	}
}
