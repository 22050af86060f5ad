package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkStopLatencyRate measures, for issue 17, the time from StopQuery
// to its return for a streaming query over the rate source at its cap
// (DefaultMaxRowsPerSecond) that has fallen 1000 s behind its clock, while
// the epoch's plan drains the generated rows. Each iteration is one trial
// (-benchtime=20x); it reports p50 and p99 (the maximum below 100 trials)
// in milliseconds. Every trial ends with the checked allocator at zero: the
// stopped query released everything. The trial waits on progress (rows
// drained), never on time.
func BenchmarkStopLatencyRate(b *testing.B) {
	var lat, exec []time.Duration
	for range b.N {
		total, plan := stopRateTrial(b)
		lat, exec = append(lat, total), append(exec, plan)
	}
	q := func(lat []time.Duration, p float64) float64 {
		slices.Sort(lat)
		return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(q(lat, 0.5), "p50-ms")
	b.ReportMetric(q(lat, 0.99), "p99-ms")
	// Of which the epoch's plan returning (the rest is the engine's
	// teardown: logs closed, sink and executor closed, hooks).
	b.ReportMetric(q(exec, 0.5), "plan-p50-ms")
	b.ReportMetric(q(exec, 0.99), "plan-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// stopRateTrial returns the time from the stop to Stop returning and to
// the epoch's plan returning.
func stopRateTrial(b *testing.B) (total, plan time.Duration) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(0))
	src, err := rate.NewRateSource(mem, rate.RateOptions{RowsPerSecond: rate.DefaultMaxRowsPerSecond, Clock: clock, MaxRowsPerTrigger: 1 << 62})
	if err != nil {
		b.Fatal(err)
	}
	var rows atomic.Int64
	var planEnd atomic.Int64 // unix nanoseconds
	exec := &funcExecutor{fn: func(ctx context.Context, _ stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
		defer func() { planEnd.Store(time.Now().UnixNano()) }()
		defer in[0].Close()
		for {
			rec, err := in[0].Next(ctx)
			if errors.Is(err, io.EOF) {
				return vector.NewScan(valueSchema)
			}
			if err != nil {
				return nil, err
			}
			rows.Add(rec.NumRows())
			rec.Release()
		}
	}}
	dir := b.TempDir()
	q, err := startQuery(context.Background(), "stop-latency", Config{
		CheckpointDir: dir, Sources: []stream.Source{src}, SourceDescriptions: []string{"rate"},
		Sink: &collectsink.Sink{}, SinkDescription: "collect", Exec: exec, Trigger: processingTime(0),
		Conf:   map[string]string{stream.ConfShufflePartitions: "2"},
		Writer: &checkpoint.Writer{NoSync: true}, MinBatchesToRetain: 100, NoDataBatches: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "sources", "0", "0")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			q.Stop()
			b.Fatal("the rate source never recorded its start time")
		}
		time.Sleep(time.Millisecond)
	}
	clock.Advance(1000 * time.Second)
	for rows.Load() < 1_000_000 {
		if time.Now().After(deadline) {
			q.Stop()
			b.Fatalf("the epoch did not start draining (%d rows)", rows.Load())
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() { q.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(40 * time.Millisecond):
		dumpStacks(b)
		<-stopped
	}
	took := time.Since(start)
	if n := rows.Load(); n >= 100_000_000_000 {
		b.Fatalf("the epoch ran to the end (%d rows)", n)
	}
	if err := q.Exception(); err != nil {
		b.Fatalf("a stopped query reports %v", err)
	}
	if n := mem.CurrentAlloc(); n != 0 {
		b.Fatalf("%d bytes still allocated after the stopped query", n)
	}
	return took, time.Unix(0, planEnd.Load()).Sub(start)
}

// dumpStacks writes every goroutine's stack to a file in $CANCEL_STACKS,
// when set: where a slow trial spends the time after the stop.
func dumpStacks(b *testing.B) {
	dir := os.Getenv("CANCEL_STACKS")
	if dir == "" {
		return
	}
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	f, err := os.CreateTemp(dir, "stop-stacks-*.txt")
	if err != nil {
		b.Fatal(err)
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
}
