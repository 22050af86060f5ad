package arrowstream

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// gatedSink holds its first epoch until open is closed.
type gatedSink struct {
	collectsink.Sink
	open    chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (g *gatedSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	g.once.Do(func() {
		close(g.entered)
		select {
		case <-g.open:
		case <-ctx.Done():
		}
	})
	return g.Sink.AddBatch(ctx, epoch, data)
}

// TestMemoryStreamReadByTwoQueries: two queries read one memory table;
// the fast one commits many epochs while the slow one is stuck in its
// first; the slow one then reads every row (its unread rows were kept
// for it), and once both committed the rows are released.
func TestMemoryStreamReadByTwoQueries(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	s.RegisterStream("input", ms)
	fast := &collectsink.Sink{}
	slow := &gatedSink{open: make(chan struct{}), entered: make(chan struct{})}
	start := func(sink Sink) *StreamingQuery {
		q, err := s.ReadStream("input").WriteStream().Sink(sink).Option("checkpointLocation", t.TempDir()).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	qf, qs := start(fast), start(slow)
	defer qf.Stop()
	defer qs.Stop()
	addInts(t, ms, 1, 2)
	select {
	case <-slow.entered:
	case <-time.After(time.Minute):
		t.Fatal("the slow query did not reach its sink")
	}
	for i := 3; i <= 8; i++ {
		addInts(t, ms, i)
		if err := qf.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(fast.Order()) < 3 {
		t.Fatalf("the fast query ran epochs %v", fast.Order())
	}
	close(slow.open)
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := qs.ProcessAllAvailable(tctx); err != nil {
		t.Fatalf("the slow query: %v", err)
	}
	want := vt.SortRows([]vt.Row{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}})
	for name, got := range map[string][]vt.Row{"fast": fast.All(), "slow": slow.All()} {
		if !vt.RowsEqual(want, vt.SortRows(got)) {
			t.Errorf("%s query read %v, want %v", name, got, want)
		}
	}
}
