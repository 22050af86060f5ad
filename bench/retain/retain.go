package retain

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// schema is the streamed rows: 16 bytes each, as in the table
// (360K rows in 5.8 MB).
var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64},
	{Name: "x", Type: vector.Float64},
}, nil)

// Config sizes a run.
type Config struct {
	// Epochs and RowsPerEpoch: the table is fed Epochs epochs of
	// RowsPerEpoch rows, one record each.
	Epochs, RowsPerEpoch int
	// Sink configures the memory-sink tables (compaction, retention).
	Sink memsink.Options
	// Dir holds the query's checkpoint.
	Dir string
	// Pace, when positive, feeds one epoch per Pace of wall-clock time
	// (the table: 20 rows per 10 ms), so that the collector's and
	// the compaction's background work run as they would in a live
	// process; zero feeds the epochs back to back.
	Pace time.Duration
	// SampleEvery, when positive, records a Sample (resident set against
	// retained bytes) at most this often, for the figures over time of a
	// long run.
	SampleEvery time.Duration
	// MemoryTarget, when positive, runs under the session's memory
	// target (arrowstream.Session.StartMemoryTarget, what a server runs
	// with --memory-target): a soft memory limit of the runtime's
	// baseline plus MemoryTarget times the bytes the session holds (the
	// table's retained bytes).
	MemoryTarget float64
}

// Sample is the process's memory after epoch Epoch, Elapsed into the run.
type Sample struct {
	Elapsed time.Duration
	Epoch   int
	// RSS is the resident set now, Retained the table's bytes (Arrow plus
	// bookkeeping), HeapObjects the Go heap's live and unswept objects.
	RSS, Retained, HeapObjects int64
}

// Result is what a run measured. RSS figures are 0 where the OS does not
// tell (see harness.RSSWatch).
type Result struct {
	Epochs, Rows int64
	// Retained is what the table holds at the end: Arrow bytes plus
	// bookkeeping (Size.Bytes + Size.Overhead), with Size itself.
	Retained int64
	Size     memsink.Size
	// StartRSS is the resident set before the query starts (after a GC
	// that returned free memory), PeakRSS the highest while it ran.
	StartRSS, PeakRSS int64
	// PeakArrow is the most bytes the session's Arrow allocator had out
	// at once (the pool's free buffers included, as in the engine
	// workloads' peak_memory).
	PeakArrow int64
	// HeapAfterGC is the Go heap in use after a GC at the end.
	HeapAfterGC int64
	// Memory measured the run (baseline, peak, the table's retained bytes
	// after each epoch as the held bytes).
	Memory *harness.MemoryMeter
	// AfterGCRSS is the resident set once the table is dropped and a GC
	// ran; AfterFreeRSS once debug.FreeOSMemory returned free memory.
	AfterGCRSS, AfterFreeRSS int64
	// Samples are the figures over time (Config.SampleEvery).
	Samples []Sample
	// CPU is the process's CPU time over the epochs (all threads, the
	// collector's included).
	CPU time.Duration
}

// Growth is the peak resident set's growth over the start.
func (r Result) Growth() int64 { return r.PeakRSS - r.StartRSS }

// Ratio is Growth over Retained: what each retained byte cost the process
// at its peak (goal ≤ 1.5).
func (r Result) Ratio() float64 {
	if r.Retained == 0 {
		return 0
	}
	return float64(r.Growth()) / float64(r.Retained)
}

// Run streams cfg.Epochs epochs into a memory-sink table through the
// engine (SELECT * FROM STREAM, Append), measuring the process's resident
// set, then drops the table and measures it again.
func Run(ctx context.Context, cfg Config) (Result, error) {
	var res Result
	// The session's default allocator (a pool over mapped memory) with
	// the Arrow peak measured under the pool, as the engine workloads do.
	peak := harness.NewPeakAllocator(vector.NewMappedAllocator())
	pool := vector.NewPoolAllocator(peak, 0)
	defer pool.Close()
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: pool, Logger: slog.New(slog.DiscardHandler), CheckpointRoot: cfg.Dir, NoSync: true,
	})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, cfg.Sink)
	src := arrowstream.NewMemoryStream(s.Allocator(), schema)
	defer src.Close()
	src.SetMaxOffsetsPerTrigger(1)
	s.RegisterStream("events", src)

	input := memory.NewGoAllocator()
	meter := harness.StartMemory()
	defer meter.Stop()
	if cfg.MemoryTarget > 0 {
		// The session's own target (what a server runs with
		// --memory-target): it measures the table through the catalog
		// memsink.Install registered, after every epoch.
		mt, err := s.StartMemoryTarget(arrowstream.MemoryTargetOptions{Ratio: cfg.MemoryTarget})
		if err != nil {
			return res, err
		}
		defer mt.Stop()
	}
	res.Memory = meter
	res.StartRSS = meter.Baseline()
	r, err := s.SQL(ctx, "CREATE STREAMING TABLE small TBLPROPERTIES ('outputMode' = 'append') AS SELECT * FROM STREAM events")
	if err != nil {
		return res, fmt.Errorf("start: %w", err)
	}
	q := r.Query
	defer q.Stop()
	span := harness.StartSpan()
	start := time.Now()
	next, nextSample := start, start
	for e := range cfg.Epochs {
		if cfg.Pace > 0 {
			if d := time.Until(next); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return res, ctx.Err()
				}
			}
			next = next.Add(cfg.Pace)
		}
		rec := epochRecord(input, e, cfg.RowsPerEpoch)
		_, err := src.AddRecord(rec)
		rec.Release()
		if err != nil {
			return res, fmt.Errorf("epoch %d: %w", e, err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			return res, fmt.Errorf("epoch %d: %w", e, err)
		}
		if tbl, ok := cat.Lookup("small"); ok {
			sz := tbl.Size()
			meter.ObserveHeld(sz.Bytes + sz.Overhead)
			if now := time.Now(); cfg.SampleEvery > 0 && !now.Before(nextSample) {
				rss, _ := harness.CurrentRSS()
				res.Samples = append(res.Samples, Sample{Elapsed: now.Sub(start), Epoch: e + 1,
					RSS: rss, Retained: sz.Bytes + sz.Overhead, HeapObjects: harness.HeapObjects()})
				nextSample = now.Add(cfg.SampleEvery)
			}
		}
	}
	_, res.CPU = span.Stop()
	tbl, ok := cat.Lookup("small")
	if !ok {
		return res, fmt.Errorf("table small is not in the catalog")
	}
	res.Size = tbl.Size()
	res.Epochs, res.Rows = int64(res.Size.Epochs), res.Size.Rows
	res.Retained = res.Size.Bytes + res.Size.Overhead
	res.PeakRSS = meter.Peak()
	res.PeakArrow = peak.Peak()
	if want := int64(cfg.Epochs * cfg.RowsPerEpoch); res.Rows != want {
		return res, fmt.Errorf("table holds %d rows, want %d", res.Rows, want)
	}
	var ms runtime.MemStats
	meter.SampleHeap() // a GC, after the peak was read
	runtime.ReadMemStats(&ms)
	res.HeapAfterGC = int64(ms.HeapInuse)

	if err := q.Stop(); err != nil {
		return res, fmt.Errorf("stop: %w", err)
	}
	if t, ok := cat.Drop("small"); ok {
		t.Close()
	}
	runtime.GC()
	res.AfterGCRSS, _ = harness.CurrentRSS()
	freeOS()
	res.AfterFreeRSS, _ = harness.CurrentRSS()
	return res, nil
}

// freeOS runs a GC and returns free memory to the OS.
func freeOS() { debug.FreeOSMemory() }

// epochRecord is epoch e's rows: ids e*n.., x = id/2.
func epochRecord(mem memory.Allocator, e, n int) arrow.Record {
	ib := array.NewInt64Builder(mem)
	xb := array.NewFloat64Builder(mem)
	defer ib.Release()
	defer xb.Release()
	ib.Reserve(n)
	xb.Reserve(n)
	for i := range n {
		id := int64(e*n + i)
		ib.UnsafeAppend(id)
		xb.UnsafeAppend(float64(id) / 2)
	}
	ia, xa := ib.NewArray(), xb.NewArray()
	defer ia.Release()
	defer xa.Release()
	return array.NewRecord(schema, []arrow.Array{ia, xa}, int64(n))
}
