package stateful

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// eventTimeWatermark passes rows through unchanged and records, for the
// epoch, the count, min, max and sum of the event-time column over every
// row that reaches it, late rows included (Spark's EventTimeWatermarkExec).
type eventTimeWatermark struct {
	vector.Operator
	col     int
	delayMs int64
	node    string
	stats   *EventTimeStats
}

// NewEventTimeWatermark wraps input; stats is reset and filled as rows
// flow.
func NewEventTimeWatermark(input vector.Operator, col int, delayMs int64, node string, stats *EventTimeStats) *eventTimeWatermark {
	*stats = EventTimeStats{NodeName: node, DelayMs: delayMs, MinMs: math.MaxInt64, MaxMs: math.MinInt64}
	return &eventTimeWatermark{Operator: input, col: col, delayMs: delayMs, node: node, stats: stats}
}

func (w *eventTimeWatermark) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := w.Operator.Next(ctx)
	if err != nil {
		return rec, err
	}
	col := rec.Column(w.col).(*array.Timestamp)
	vals := col.TimestampValues()
	s := w.stats
	hasNulls := col.NullN() > 0
	if !hasNulls {
		addEventTimes(s, vals)
		return rec, nil
	}
	for i, v := range vals {
		if hasNulls && col.IsNull(i) {
			continue
		}
		ms := floorDiv(int64(v), 1000)
		s.Count++
		s.SumMs += float64(ms)
		if ms > s.MaxMs {
			s.MaxMs = ms
		}
		if ms < s.MinMs {
			s.MinMs = ms
		}
	}
	return rec, nil
}

// addEventTimes adds event times without nulls (µs) to s. It keeps the
// running figures in locals and sums whole milliseconds as integers (in
// chunks that cannot overflow), which is several times faster than
// updating s per row; the sum is exact where per-row float additions
// rounded.
func addEventTimes(s *EventTimeStats, vals []arrow.Timestamp) {
	const chunk = 1 << 10 // any µs time is below 2^53 ms: 2^10 of them sum below 2^63
	for len(vals) > 0 {
		part := vals[:min(chunk, len(vals))]
		vals = vals[len(part):]
		lo, hi, sum := int64(math.MaxInt64), int64(math.MinInt64), int64(0)
		for _, v := range part {
			x := int64(v)
			// An unsigned division by a constant is a multiply and a
			// shift; floorDiv's signed one and its remainder test cost
			// several times that per row. It is the floor for x ≥ 0;
			// a chunk with a time before 1970 is summed again below.
			sum += int64(uint64(x) / 1000)
			lo, hi = min(lo, x), max(hi, x)
		}
		if lo < 0 {
			sum = 0
			for _, v := range part {
				sum += floorDiv(int64(v), 1000)
			}
		}
		s.Count += int64(len(part))
		s.SumMs += float64(sum)
		// floorDiv is monotonic: the extremes of the ms values are those of
		// the µs values.
		s.MinMs, s.MaxMs = min(s.MinMs, floorDiv(lo, 1000)), max(s.MaxMs, floorDiv(hi, 1000))
	}
}

// floorDiv divides rounding toward negative infinity (event times before
// 1970 are negative).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// EventTimeStats are what one watermark node observed in one epoch (all
// rows that reached it, late ones included), in milliseconds.
type EventTimeStats struct {
	Count    int64
	MaxMs    int64
	MinMs    int64
	SumMs    float64 // for the average
	DelayMs  int64   // the node's watermark delay
	NodeName string  // stable id of the watermark node in the plan
}
