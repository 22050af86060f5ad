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

// TestAddEventTimesAfterEpoch checks the statistics' sum exactly for
// chunks of times after 1970 (the unsigned path), chunks with one time
// before it at any place (the floor path), and times at, next to and
// between whole milliseconds. The sums stay below 2^53, so SumMs is exact.
func TestAddEventTimesAfterEpoch(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for iter := 0; iter < 200; iter++ {
		n := 1 + r.Intn(3000)
		vals := make([]arrow.Timestamp, n)
		for i := range vals {
			ms := r.Int63n(1e9)
			switch r.Intn(4) {
			case 0:
				vals[i] = arrow.Timestamp(ms * 1000)
			case 1:
				vals[i] = arrow.Timestamp(ms*1000 + 999)
			case 2:
				vals[i] = arrow.Timestamp(ms*1000 + 1)
			default:
				vals[i] = arrow.Timestamp(ms*1000 + r.Int63n(1000))
			}
		}
		switch iter % 6 {
		case 0: // one time before 1970, inside its last millisecond
			vals[r.Intn(n)] = arrow.Timestamp(-1 - r.Int63n(999))
		case 3:
			vals[r.Intn(n)] = arrow.Timestamp(-1 - r.Int63n(1e9))
		}
		if iter%7 == 0 {
			vals[r.Intn(n)] = 0
		}
		got := EventTimeStats{MinMs: math.MaxInt64, MaxMs: math.MinInt64}
		addEventTimes(&got, vals)
		var sum int64
		for _, v := range vals {
			sum += floorDiv(int64(v), 1000)
		}
		if got.SumMs != float64(sum) || got.Count != int64(n) {
			t.Fatalf("iter %d (%d rows): count %d sum %v, want %d %d", iter, n, got.Count, got.SumMs, n, sum)
		}
	}
}
