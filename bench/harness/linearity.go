package harness

import (
	"fmt"
	"slices"
	"strings"
)

// LinearitySizes are the input sizes (events) of a linearity series: cost
// per event should stay flat from the smallest to the largest.
var LinearitySizes = []int{200_000, 400_000, 800_000, 1_600_000, 3_200_000}

// Series is a cost per event measured at increasing input sizes.
type Series struct {
	Workload string
	Sizes    []int
	CostNs   []float64 // CPU nanoseconds per event, by size
}

// Add records the CPU cost per event at size.
func (s *Series) Add(size int, costNs float64) {
	s.Sizes = append(s.Sizes, size)
	s.CostNs = append(s.CostNs, costNs)
}

// Spread is the largest deviation of a cost from the series' median, as
// a fraction of the median (0.25: within ±25%); 0 for an empty series.
func (s *Series) Spread() float64 {
	if len(s.CostNs) == 0 {
		return 0
	}
	sorted := slices.Clone(s.CostNs)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	if med <= 0 {
		return 0
	}
	dev := 0.0
	for _, c := range s.CostNs {
		dev = max(dev, abs(c-med)/med)
	}
	return dev
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// String renders the series on one line: size=cost pairs and the spread.
func (s *Series) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s CPU ns/event:", s.Workload)
	for i, n := range s.Sizes {
		fmt.Fprintf(&b, " %d=%.0f", n, s.CostNs[i])
	}
	fmt.Fprintf(&b, " spread ±%.0f%% of the median", 100*s.Spread())
	return b.String()
}
