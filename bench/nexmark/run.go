package nexmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// engineRun is what one run of a query through the engine measured.
type engineRun struct {
	events    int64
	elapsed   time.Duration   // sum of the epochs' latencies
	cpu       time.Duration   // process CPU (getrusage) over the epochs and the query's stop, the harness's bookkeeping left out
	startCPU  time.Duration   // process CPU of the session's setup and the query's start (not in cpu)
	answerCPU time.Duration   // process CPU of reading the query's answer after its stop (not in cpu), its rows' formatting left out
	formatCPU time.Duration   // the CPU of formatting the answer's rows (canonRows; in neither figure above)
	aside     time.Duration   // the CPU of that bookkeeping (harness.Span.Aside)
	stopCPU   time.Duration   // the CPU of stopping the query after the epochs (in cpu)
	latencies []time.Duration // per epoch: input accepted → rows visible
	peak      int64           // most Arrow bytes the engine held at once
	// arrowEnd is the Arrow bytes in use after the last epoch (the pool's
	// free buffers left out) and heldEnd the held bytes then: what the
	// held figure leaves out of the engine's Arrow memory.
	arrowEnd, heldEnd int64
	answer            []string
	// stateRows and peakStateRows are the rows in the query's state
	// (progress numRowsTotal over its stateful operators) after the last
	// epoch and at most after any epoch.
	stateRows, peakStateRows int64
	// faults is the minor page faults the process took over the epochs
	// (-1 where not available; ru_minflt, which counts the pages
	// MADV_POPULATE_WRITE maps as well as trapped ones) and allocBytes the Go heap bytes allocated
	// over them (runtime.MemStats.TotalAlloc; Arrow buffers from the Go
	// allocator included): in a run this short no collection comes round
	// to recycle them, so each allocated byte is a fresh byte of memory.
	faults, allocBytes int64
	// mem measured the process's memory over the run against the most,
	// after any epoch, of the bytes the query is meant to hold: its state
	// (progress memoryUsedBytes over its stateful operators) plus what its
	// memory-sink table retains (Arrow bytes and bookkeeping). Its
	// baseline is taken when the run starts, after the input was
	// generated.
	mem *harness.MemoryMeter
}

// runEngine starts q as a streaming table of a fresh session whose
// streams person, auction and bid are memory streams, then feeds one batch
// per epoch: each epoch's latency runs from adding its records to the
// streams to ProcessAllAvailable's return, when the epoch (and the no-data
// epoch its watermark causes) is committed and its rows are visible in
// the memory sink. Batches are borrowed. A positive target runs the
// engine under a soft memory limit of that many bytes per held byte over
// the baseline (harness.Config.MemoryTarget).
func runEngine(ctx context.Context, mem memory.Allocator, dir string, q query, batches []Batch, target float64) (_ *engineRun, err error) {
	meter, err := harness.StartMemoryFor(harness.Config{MemoryTarget: target})
	if err != nil {
		return nil, err
	}
	defer meter.Stop()
	// The start is measured from here: the meter's baseline above
	// collects the whole heap (the generated input included) and returns
	// its free pages to the OS, work of the harness that grows with the
	// input, not the engine's (session 39).
	startSpan := harness.StartSpan()
	peak := newPeakAllocator(mem)
	pool := vector.NewPoolAllocator(peak, 0)
	defer pool.Close()
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: pool, Logger: slog.New(slog.DiscardHandler), CheckpointRoot: dir, NoSync: true,
		Conf: q.conf,
	})
	pebblestate.Register(s)
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	defer func() {
		for _, name := range cat.List() {
			if t, ok := cat.Drop(name); ok {
				t.Close()
			}
		}
	}()
	streams := map[string]*arrowstream.MemoryStream{
		"person": arrowstream.NewMemoryStream(pool, PersonSchema), "auction": arrowstream.NewMemoryStream(pool, AuctionSchema),
		"bid": arrowstream.NewMemoryStream(pool, BidSchema),
	}
	for name, src := range streams {
		defer src.Close()
		src.SetMaxOffsetsPerTrigger(1)
		s.RegisterStream(name, src)
	}
	if q.sideInput {
		side := sideInputRecord(pool)
		err := s.RegisterTable("side_input", side.Schema(), side)
		side.Release()
		if err != nil {
			return nil, fmt.Errorf("side input: %w", err)
		}
		defer s.DropTable("side_input")
	}
	props := "'outputMode' = 'append'"
	if q.update {
		props = "'outputMode' = 'update', 'updateAsView' = 'true'"
	}
	res, err := s.SQL(ctx, fmt.Sprintf("CREATE STREAMING TABLE %s TBLPROPERTIES (%s) AS %s", q.name, props, q.sql))
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	sq := res.Query
	defer sq.Stop()

	run := &engineRun{latencies: make([]time.Duration, 0, len(batches)), mem: meter}
	_, run.startCPU = startSpan.Stop()
	// The harness's own bookkeeping between epochs (reads of /proc)
	// allocates too: asideAlloc takes it out, as Aside takes its CPU out.
	heap := newHeapAllocated()
	alloc0, asideAlloc := heap.read(), uint64(0)
	faults0, faultsOK := harness.ProcessFaults()
	span := harness.StartSpan()
	for i := range batches {
		b := &batches[i]
		start := time.Now()
		for _, in := range []struct {
			src *arrowstream.MemoryStream
			rec arrow.Record
		}{{streams["person"], b.Person}, {streams["auction"], b.Auction}, {streams["bid"], b.Bid}} {
			if _, err := in.src.AddRecord(in.rec); err != nil {
				return nil, err
			}
		}
		if err := sq.ProcessAllAvailable(ctx); err != nil {
			return nil, fmt.Errorf("epoch of events %d..%d: %w", b.FirstEvent, b.FirstEvent+b.Events-1, err)
		}
		lat := time.Since(start)
		run.latencies = append(run.latencies, lat)
		run.elapsed += lat
		run.events += b.Events
		// The memory figures are the harness's (reads of /proc/self/status
		// and runtime metrics, tens of µs): their CPU is not the engine's.
		a0 := heap.read()
		span.Aside(func() {
			run.stateRows = stateRows(sq.LastProgress())
			run.peakStateRows = max(run.peakStateRows, run.stateRows)
			held := sq.LastProgress().StateMemoryBytes()
			if t, ok := cat.Lookup(q.name); ok {
				sz := t.Size()
				held += sz.Bytes + sz.Overhead
			}
			meter.ObserveHeld(held)
			meter.ObservePooled(int64(pool.Retained() + pool.RetainedLarge()))
			run.heldEnd = held
		})
		asideAlloc += heap.read() - a0
	}
	run.arrowEnd = peak.Current() - int64(pool.Retained()+pool.RetainedLarge())
	_, run.cpu = span.Stop()
	run.faults = -1
	if faults1, ok := harness.ProcessFaults(); ok && faultsOK {
		run.faults = faults1 - faults0
	}
	run.allocBytes = int64(heap.read() - alloc0 - asideAlloc)
	run.aside = span.AsideCPU()
	run.peak = peak.Peak()
	// The Go heap after a collection, while the query still holds its
	// state and table (the peak RSS is read first).
	meter.SampleHeap()
	if err := harness.WriteHeapProfile(q.name); err != nil {
		return nil, err
	}
	// Background work the epochs started (a state snapshot still being
	// written when the last epoch committed) is the engine's too, and
	// counted: stopping the query waits for it. (What of it ran during
	// the heap sample above is not counted; the stop itself costs about
	// 0.1 ms when nothing is left.)
	stop := harness.StartSpan()
	sq.Stop()
	_, run.stopCPU = stop.Stop()
	run.cpu += run.stopCPU
	answer := harness.StartSpan()
	if run.answer, err = engineAnswer(ctx, s, cat, q, &answer); err != nil {
		return nil, err
	}
	_, run.answerCPU = answer.Stop()
	run.formatCPU = answer.AsideCPU()
	return run, nil
}

// engineCPU is the process CPU of the engine's part of the run: the
// query's start, its epochs and stop, and the read of its answer (not
// the formatting of its rows: engineAnswer). It leaves out the harness's
// memory figures: the meter's baseline and its heap sample each collect
// the whole process heap, which holds the run's generated input, so that
// their CPU grows with the input though no engine work does (q7: 14 of
// its 27 ms at 200K events, 25-35 ms at 3.2M).
func (r *engineRun) engineCPU() time.Duration { return r.startCPU + r.cpu + r.answerCPU }

// stateRows sums numRowsTotal over a progress report's stateful operators.
func stateRows(p *arrowstream.StreamingQueryProgress) int64 {
	if p == nil {
		return 0
	}
	var n int64
	for _, op := range p.StateOperators {
		n += op.NumRowsTotal
	}
	return n
}

// engineAnswer reads the query's answer: its sink table, or the result of
// its post query over that table. The rows' canonical strings (the
// harness's, for the comparison with the peer: q20's are a third of its
// run) are formatted aside of span.
func engineAnswer(ctx context.Context, s *arrowstream.Session, cat *memsink.Catalog, q query, span *harness.Span) (rows []string, err error) {
	canon := func(recs []arrow.Record) {
		span.Aside(func() { rows, err = canonRows(recs) })
	}
	if q.post == "" {
		t, ok := cat.Lookup(q.name)
		if !ok {
			return nil, fmt.Errorf("no sink table %s", q.name)
		}
		snap := t.Snapshot()
		defer snap.Release()
		canon(snap.Records())
		return rows, err
	}
	res, err := s.SQL(ctx, q.post)
	if err != nil {
		return nil, fmt.Errorf("post query: %w", err)
	}
	defer res.Close()
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for {
		rec, err := res.Op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("post query: %w", err)
		}
		recs = append(recs, rec)
	}
	canon(recs)
	return rows, err
}

// sideInputRecord is q13's bounded side input: key 0..9999, value its
// decimal string.
func sideInputRecord(mem memory.Allocator) arrow.Record {
	schema := fields(col("key", vector.Int64), col("value", vector.String))
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	keys, vals := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.StringBuilder)
	for k := range int64(sideInputKeys) {
		keys.Append(k)
		vals.Append(sideInputValue(k))
	}
	return b.NewRecord()
}

// peerRun is what one run of a query's Go peer measured.
type peerRun struct {
	elapsed time.Duration
	cpu     time.Duration // process CPU (getrusage) over the epochs
	answer  []string
}

// runPeer feeds the batches to a new peer of q, one epoch each, timing
// the processing (not the formatting of the answer).
func runPeer(q query, batches []Batch) *peerRun {
	// The peer starts from a collected heap with its free memory returned
	// to the OS, as the engine does (harness.StartMemory): else it would
	// run on the pages the engine's run left mapped, under the heap goal
	// the engine's state set, without the page faults and collections the
	// engine's figure pays for.
	harness.Settle()
	p := q.newPeer()
	span := harness.StartSpan()
	for i := range batches {
		p.epoch(&batches[i])
	}
	wall, cpu := span.Stop()
	return &peerRun{elapsed: wall, cpu: cpu, answer: p.answer()}
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// heapAllocated reads the Go heap's cumulative allocated bytes
// (runtime/metrics, without ReadMemStats' stop of the world). Around the
// harness's bookkeeping between epochs it counts that bookkeeping's
// allocations, and a background job of the engine's allocating at that
// moment (rare: the epoch is committed) with them.
type heapAllocated struct{ s []metrics.Sample }

func newHeapAllocated() *heapAllocated {
	return &heapAllocated{s: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
}

func (h *heapAllocated) read() uint64 {
	metrics.Read(h.s)
	if h.s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return h.s[0].Value.Uint64()
}
