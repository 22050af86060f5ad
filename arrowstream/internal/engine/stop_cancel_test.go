package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// blockingSource is a memory stream whose Read blocks until its context
// ends, as a source stuck on a remote system would.
type blockingSource struct {
	*memsource.Stream
	reading chan struct{}
	sawCtx  atomic.Value // the error Read returned
}

func (b *blockingSource) Read(ctx context.Context, _, _ stream.Offset) (vector.Operator, error) {
	close(b.reading)
	<-ctx.Done()
	err := context.Cause(ctx)
	b.sawCtx.Store(err)
	return nil, err
}

// stopWithin calls q.Stop and fails the test if it does not return within a
// generous deadline (CI is loaded; the point is that it returns at all).
func stopWithin(t *testing.T, q *Query) {
	t.Helper()
	done := make(chan struct{})
	go func() { q.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return: the running epoch ignored the cancellation")
	}
}

// TestStopCancelsEpochInSourceRead: Stop cancels the running epoch's
// context, which reaches the source's Read.
func TestStopCancelsEpochInSourceRead(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &blockingSource{Stream: memsource.New(mem, valueSchema), reading: make(chan struct{})}
	defer src.Stream.Close()
	if _, err := src.AddData([]any{int32(1)}, []any{int32(2)}); err != nil {
		t.Fatal(err)
	}
	q := startTestQuery(t, t.TempDir(), src, &collectsink.Sink{}, &funcExecutor{}, processingTime(0))
	select {
	case <-src.reading:
	case <-time.After(30 * time.Second):
		t.Fatal("the epoch never reached Read")
	}
	stopWithin(t, q)
	if err, _ := src.sawCtx.Load().(error); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read saw %v, want context.Canceled", err)
	}
	if err := q.Exception(); err != nil {
		t.Fatalf("a stopped query reports %v", err)
	}
}

// TestStopCancelsLongEpochInOperator: an epoch of 10^11 rate rows (the
// largest rate, far behind the clock) is being drained by the plan when
// Stop is called; the context reaches the source's generator and the
// draining operator, the epoch ends and every buffer is released.
func TestStopCancelsLongEpochInOperator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(0))
	src, err := rate.NewRateSource(mem, rate.RateOptions{RowsPerSecond: rate.DefaultMaxRowsPerSecond, Clock: clock, MaxRowsPerTrigger: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	var rows atomic.Int64
	var drainErr atomic.Value
	exec := &funcExecutor{fn: func(ctx context.Context, _ stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
		// A count that drains its input: the long operation of the epoch.
		defer in[0].Close()
		for {
			rec, err := in[0].Next(ctx)
			if errors.Is(err, io.EOF) {
				return vector.NewScan(valueSchema)
			}
			if err != nil {
				drainErr.Store(err)
				return nil, err
			}
			rows.Add(rec.NumRows())
			rec.Release()
		}
	}}
	dir := t.TempDir()
	q := startTestQuery(t, dir, src, &collectsink.Sink{}, exec, processingTime(0))
	// The start time is recorded when the query starts; the query then
	// falls 1000 s (10^11 rows) behind.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "sources", "0", "0")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rate source never recorded its start time")
		}
		time.Sleep(10 * time.Millisecond)
	}
	clock.Advance(1000 * time.Second)
	for rows.Load() < 1_000_000 {
		if time.Now().After(deadline) {
			t.Fatalf("the epoch did not start draining (%d rows)", rows.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopWithin(t, q)
	if err, _ := drainErr.Load().(error); !errors.Is(err, context.Canceled) {
		t.Fatalf("the draining operator saw %v, want context.Canceled", err)
	}
	if n := rows.Load(); n >= 100_000_000_000 {
		t.Fatalf("the epoch ran to the end (%d rows) instead of stopping", n)
	}
	if err := q.Exception(); err != nil {
		t.Fatalf("a stopped query reports %v", err)
	}
}
