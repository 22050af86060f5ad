package stateful

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// BenchmarkAddEventTimes is one q7 epoch's bids (10K times in order, after
// 1970) through a watermark node's statistics.
func BenchmarkAddEventTimes(b *testing.B) {
	vals := make([]arrow.Timestamp, 10000)
	for i := range vals {
		vals[i] = arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1013)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := EventTimeStats{MinMs: math.MaxInt64, MaxMs: math.MinInt64}
		addEventTimes(&s, vals)
	}
}
