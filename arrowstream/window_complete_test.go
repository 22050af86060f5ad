package arrowstream

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// A window function over a streaming aggregation in Complete mode sees the
// whole aggregated result of each epoch (top-N per group with QUALIFY);
// Append and Update refuse it with Spark's message.
func TestWindowOverCompleteAggregation(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	sink := &collectsink.Sink{}
	s.RegisterSinkFormat("memory", func(context.Context, memory.Allocator, SinkInfo) (Sink, error) { return sink, nil })
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	query := "SELECT key, sum(v) AS total, rank() OVER (ORDER BY sum(v) DESC) AS r FROM STREAM events GROUP BY key QUALIFY r <= 2"
	refused := map[string]string{
		"append": "SELECT key, row_number() OVER (PARTITION BY key ORDER BY v) FROM STREAM events",
		"update": query,
	}
	for mode, q := range refused {
		_, err := s.SQL(ctx, "CREATE STREAMING TABLE bad_"+mode+" TBLPROPERTIES ('outputMode' = '"+mode+"', 'checkpointLocation' = '"+t.TempDir()+"') AS "+q)
		if err == nil || !strings.Contains(err.Error(), "Non-time-based windows are not supported on streaming DataFrames/Datasets") {
			t.Fatalf("%s mode: got %v, want Spark's refusal of non-time windows", mode, err)
		}
	}
	res, err := s.SQL(ctx, "CREATE STREAMING TABLE top2 TBLPROPERTIES ('outputMode' = 'complete', 'checkpointLocation' = '"+t.TempDir()+"') AS "+query)
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	var q *StreamingQuery
	for _, a := range s.Streams().Active() {
		if a.Name() == "top2" {
			q = a
		}
	}
	if q == nil {
		t.Fatal("no query top2")
	}
	defer q.Stop()
	step := func(events [][3]int64, want []vt.Row) {
		t.Helper()
		addEvents(t, src, events...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sink.Last(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
			t.Fatalf("after %v:\n%swant\n%s", events, vt.FormatRows(got), vt.FormatRows(want))
		}
	}
	step([][3]int64{{1, 0, 5}, {2, 0, 3}, {3, 0, 1}}, []vt.Row{{int64(1), int64(5), int64(1)}, {int64(2), int64(3), int64(2)}})
	step([][3]int64{{3, 0, 10}}, []vt.Row{{int64(3), int64(11), int64(1)}, {int64(1), int64(5), int64(2)}})
	step([][3]int64{{2, 0, 8}}, []vt.Row{{int64(3), int64(11), int64(1)}, {int64(2), int64(11), int64(1)}})
}
