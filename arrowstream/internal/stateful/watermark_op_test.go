package stateful

import (
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// TestAddEventTimes checks the batch path of the event-time statistics
// against the per-row definition: negative times, values that are not
// whole milliseconds, and more than one chunk.
func TestAddEventTimes(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 7, 1<<12 + 3} {
		vals := make([]arrow.Timestamp, n)
		for i := range vals {
			vals[i] = arrow.Timestamp(r.Int63n(4e15) - 2e15)
		}
		got := EventTimeStats{MinMs: math.MaxInt64, MaxMs: math.MinInt64}
		addEventTimes(&got, vals)
		want := EventTimeStats{MinMs: math.MaxInt64, MaxMs: math.MinInt64}
		var sum int64
		for _, v := range vals {
			ms := floorDiv(int64(v), 1000)
			want.Count++
			sum += ms
			want.MinMs, want.MaxMs = min(want.MinMs, ms), max(want.MaxMs, ms)
		}
		want.SumMs = float64(sum)
		if got.Count != want.Count || got.MinMs != want.MinMs || got.MaxMs != want.MaxMs {
			t.Errorf("n=%d: got count %d min %d max %d, want %d %d %d", n, got.Count, got.MinMs, got.MaxMs, want.Count, want.MinMs, want.MaxMs)
		}
		if math.Abs(got.SumMs-want.SumMs) > 1e-9*math.Abs(want.SumMs)+1 {
			t.Errorf("n=%d: sum %v, want %v", n, got.SumMs, want.SumMs)
		}
	}
}
