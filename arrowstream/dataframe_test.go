package arrowstream

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func newTestSession(t *testing.T) (*Session, *poisonmem.Allocator) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "3"}}), mem
}

// newRows returns the rows of the epochs after the last call.
type newRows struct {
	sink *collectsink.Sink
	seen int
}

func (n *newRows) take() []vt.Row {
	all := n.sink.All()
	out := all[n.seen:]
	n.seen = len(all)
	return out
}

func addInts(t *testing.T, src *MemoryStream, vals ...int) {
	t.Helper()
	rows := make([][]any, len(vals))
	for i, v := range vals {
		rows[i] = []any{v}
	}
	if _, err := src.AddData(rows...); err != nil {
		t.Fatal(err)
	}
}

func TestDataFrameWindowedAppend(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	df := s.ReadStream("input").
		WithColumn("eventTime", "timestamp_seconds(value)").
		WithWatermark("eventTime", "10 seconds").
		GroupBy("window(eventTime, '5 seconds') AS window").Agg("count(*) AS count").
		Select("CAST(window.start AS BIGINT)", "count")
	sink := &collectsink.Sink{}
	q, err := df.WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", t.TempDir()).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	got := &newRows{sink: sink}
	step := func(vals []int, want []vt.Row) {
		t.Helper()
		addInts(t, src, vals...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("after %v:\n%swant\n%s", vals, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
	step([]int{10, 11, 12, 13, 14, 15}, nil)
	step([]int{25}, []vt.Row{{10, 5}})
	step([]int{10}, nil) // late: dropped
	p := q.LastProgress()
	if len(p.StateOperators) != 1 || p.StateOperators[0].NumRowsTotal != 2 {
		t.Fatalf("state: %s", p.JSON())
	}
	if p.EventTime["watermark"] != "1970-01-01T00:00:15.000Z" {
		t.Fatalf("watermark in progress: %v", p.EventTime)
	}
}

func TestDataFrameRunningCountAndErrors(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	sink := &collectsink.Sink{}
	q, err := s.ReadStream("input").GroupBy("value").Agg("count(*)").
		WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", t.TempDir()).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	addInts(t, src, 3, 3, 2)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.Last(); !vt.RowsEqual(vt.SortRows([]vt.Row{{3, 2}, {2, 1}}), vt.SortRows(got)) {
		t.Fatalf("got %v", got)
	}
	// Analysis errors surface at Start, naming the rule or the bad input.
	_, err = s.ReadStream("input").GroupBy("value").Agg("count(*)").WriteStream().Sink(sink).OutputMode(Append).Start(ctx)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "append") {
		t.Fatalf("aggregation in append mode without watermark: %v", err)
	}
	_, err = s.ReadStream("input").Select("nope").WriteStream().Sink(sink).Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown column: %v", err)
	}
	_, err = s.ReadStream("missing").WriteStream().Sink(sink).Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("unknown table: %v", err)
	}
}
