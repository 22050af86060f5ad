package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// gatedSource is a memory stream whose next look for new data, once
// armed, signals entered and waits for release.
type gatedSource struct {
	*memsource.Stream
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gatedSource) gate() {
	if g.armed.CompareAndSwap(true, false) {
		g.entered <- struct{}{}
		<-g.release
	}
}

func (g *gatedSource) LatestOffset(ctx context.Context) (stream.Offset, error) {
	g.gate()
	return g.Stream.LatestOffset(ctx)
}

func (g *gatedSource) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	g.gate()
	return g.Stream.LatestOffsetFrom(ctx, start)
}

// TestBatchDoesNotWakeProcessAllAvailable: a trigger that ran a batch
// does not close the channel ProcessAllAvailable waits on (only a trigger
// that finds nothing to do can end its wait: waking it after the batch
// made it park again, a thread woken for nothing each epoch); the idle
// trigger after it does, and ProcessAllAvailable returns with the batch
// in the sink.
func TestBatchDoesNotWakeProcessAllAvailable(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src := &gatedSource{Stream: memsource.New(mem, valueSchema), entered: make(chan struct{}), release: make(chan struct{})}
	defer src.Close()
	var qref atomic.Pointer[Query]
	during := make(chan chan struct{}, 1)
	exec := &funcExecutor{fn: func(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
		// The waiters' channel while the batch runs; the next look for
		// data (the trigger after this one) stops at the gate.
		q := qref.Load()
		q.mu.Lock()
		during <- q.changed
		q.mu.Unlock()
		src.armed.Store(true)
		return in[0], nil
	}}
	sink := &collectsink.Sink{}
	q := startTestQuery(t, t.TempDir(), src, sink, exec, Trigger{})
	qref.Store(q)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddData([]any{int32(1)}, []any{int32(2)}); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- q.ProcessAllAvailable(ctx) }()
	var ch chan struct{}
	select {
	case ch = <-during:
	case <-time.After(30 * time.Second):
		t.Fatal("no batch ran within 30s")
	}
	select {
	case <-src.entered: // the batch is recorded; the next trigger looks for data
	case <-time.After(30 * time.Second):
		t.Fatal("no trigger after the batch within 30s")
	}
	q.mu.Lock()
	same := q.changed == ch
	q.mu.Unlock()
	select {
	case <-ch:
		t.Error("the batch's trigger closed ProcessAllAvailable's channel")
	default:
		if !same {
			t.Error("the batch's trigger replaced ProcessAllAvailable's channel")
		}
	}
	select {
	case err := <-waited:
		t.Fatalf("ProcessAllAvailable returned (%v) before a trigger found nothing to do", err)
	default:
	}
	close(src.release)
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ProcessAllAvailable did not return within 30s of the idle trigger")
	}
	if got := sink.All(); len(got) != 2 {
		t.Fatalf("sink holds %v after ProcessAllAvailable, want the batch's 2 rows", got)
	}
}
