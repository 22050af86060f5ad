package arrowstream

import (
	"context"
	"errors"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// oneShotFault fails the first epoch with input rows, once.
type oneShotFault struct {
	mu     sync.Mutex
	armed  bool
	failed []int64
}

func (f *oneShotFault) BeforeSink(_ string, epoch, inputRows int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || inputRows == 0 {
		return nil
	}
	f.armed = false
	f.failed = append(f.failed, epoch)
	return errors.New("boom")
}

func TestFaultInjectorFailsEpochBeforeSinkAndStateCommit(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	fault := &oneShotFault{}
	s := NewSession(SessionOptions{Allocator: mem, Faults: fault, Conf: map[string]string{ConfShufflePartitions: "2"}})
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.ReadStream("input").GroupBy("value").Agg("count(*)").
			WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	addInts(t, src, 1, 1)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	fault.mu.Lock()
	fault.armed = true
	fault.mu.Unlock()
	addInts(t, src, 1, 2)
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := q.AwaitTermination(tctx)
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "epoch 1") {
		t.Fatalf("query ended with %v, want the injected fault in epoch 1", err)
	}
	if len(sink.Order()) != 1 {
		t.Fatalf("the sink saw the failed epoch: %v", sink.Order())
	}
	// The restart re-runs epoch 1 from the committed state of epoch 0: the
	// staged count (1 → 3) was discarded, so key 1 counts 3, not 5.
	q = start()
	defer q.Stop()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.Last(); !vt.RowsEqual(vt.SortRows([]vt.Row{{1, 3}, {2, 1}}), vt.SortRows(got)) {
		t.Fatalf("re-run epoch: %v", got)
	}
	if len(fault.failed) != 1 || fault.failed[0] != 1 {
		t.Fatalf("fault fired for epochs %v, want [1]", fault.failed)
	}
}

func TestManualClockWaitingIgnoresPassedDeadlines(t *testing.T) {
	c := arrowstreamtest.NewManualClock(time.UnixMilli(0))
	if c.Waiting() {
		t.Fatal("waiting without waiters")
	}
	done := make(chan error, 1)
	go func() { done <- c.WaitUntil(context.Background(), time.UnixMilli(10_000)) }()
	deadline := time.Now().Add(5 * time.Second)
	for !c.Waiting() {
		if time.Now().After(deadline) {
			t.Fatal("waiter not seen")
		}
		time.Sleep(time.Millisecond)
	}
	c.Advance(5 * time.Second)
	if !c.Waiting() {
		t.Fatal("a waiter for a later time is waiting")
	}
	// Once the clock reaches the deadline the waiter is on its way out:
	// Waiting must say so at once, not when its goroutine gets to run.
	c.Advance(5 * time.Second)
	if c.Waiting() {
		t.Fatal("Waiting reports a waiter whose deadline has passed")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSQLDataFrame(t *testing.T) {
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	df := s.SQLDataFrame("SELECT value + 1 AS v FROM STREAM input")
	if df.Err() != nil || !df.IsStreaming() || df.Schema().Field(0).Name != "v" {
		t.Fatalf("df: %v %v", df.Err(), df.Schema())
	}
	if err := s.SQLDataFrame("SELECT nope FROM STREAM input").Err(); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("analysis error: %v", err)
	}
}
