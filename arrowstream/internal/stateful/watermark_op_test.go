package stateful

import (
	"fmt"
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

// TestAddEventTimesSignsByChunk: the sum of whole milliseconds is exact
// (floor division) whatever the signs in a chunk: times after 1970 only,
// before only, and a chunk of later times with one earlier time that is
// not a whole millisecond (its floor is one below its truncation), at
// the chunk's start, middle and end, compared exactly.
func TestAddEventTimesSignsByChunk(t *testing.T) {
	r := rand.New(rand.NewSource(38))
	const n = 1<<10*2 + 5 // two whole chunks and a part
	cases := map[string]func(i int) int64{
		"after 1970":  func(int) int64 { return 1_700_000_000_000_000 + r.Int63n(1e9) },
		"before 1970": func(int) int64 { return -1_000_000_000_000 - r.Int63n(1e9) },
	}
	for _, at := range []int{0, 500, 1<<10 - 1, 1 << 10, n - 1} {
		cases[fmt.Sprintf("one before 1970 at %d", at)] = func(i int) int64 {
			if i == at {
				return -1_234_567 // floor -1235 ms, truncated -1234
			}
			return 1_000_000_000_000 + r.Int63n(1e9)
		}
	}
	for name, gen := range cases {
		vals := make([]arrow.Timestamp, n)
		var want int64
		for i := range vals {
			vals[i] = arrow.Timestamp(gen(i))
			want += floorDiv(int64(vals[i]), 1000)
		}
		got := EventTimeStats{MinMs: math.MaxInt64, MaxMs: math.MinInt64}
		addEventTimes(&got, vals)
		if got.SumMs != float64(want) || got.Count != n {
			t.Errorf("%s: sum %.0f of %d, want %d of %d", name, got.SumMs, got.Count, want, n)
		}
	}
}
