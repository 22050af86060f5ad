package arrowstream

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

// newEventTimeWatermark wraps input; stats is reset and filled as rows
// flow.
func newEventTimeWatermark(input vector.Operator, col int, delayMs int64, node string, stats *EventTimeStats) *eventTimeWatermark {
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

// floorDiv divides rounding toward negative infinity (event times before
// 1970 are negative).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
