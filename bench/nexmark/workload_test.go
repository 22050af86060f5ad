package nexmark

import (
	"context"
	"log/slog"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// tinySize covers 40 s of event time in 8 epochs, so that tumbling and
// sliding windows close and auctions (about 4 s long at this rate) end.
var tinySize = Size{Events: 16_000, EpochEvents: 2_000, EventRate: 400}

// TestQueriesMatchPeers runs every query through the engine and its Go
// peer on the same events and fails when the answers differ (RunQuery
// compares them) or when memory leaks.
func TestQueriesMatchPeers(t *testing.T) {
	for _, name := range QueryNames() {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			cfg := harness.Config{Quick: true, Seed: 3, Mem: mem, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
			figs, err := RunQuery(context.Background(), cfg, name, tinySize)
			if err != nil {
				t.Fatal(err)
			}
			checkFigures(t, "nexmark-"+name, figs)
		})
	}
}

func checkFigures(t *testing.T, workload string, figs []harness.Figure) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range figs {
		// Peak memory may be 0: a pass-through query's sink keeps the
		// input's buffers and allocates nothing.
		if f.Workload != workload || f.Value < 0 || (f.Value == 0 && f.Figure != "peak_memory") || f.Unit == "" {
			t.Errorf("figure %+v", f)
		}
		if f.Peer != "" && (f.Ratio <= 0 || f.Peer != peerName) {
			t.Errorf("peer figure %+v has no ratio", f)
		}
		seen[f.Figure+"/"+f.Peer] = true
	}
	for _, want := range []string{"events/s/", "events/s/core/", "epoch_latency_p50/", "epoch_latency_p99/", "peak_memory/", "events/s/" + peerName, "events/s/core/" + peerName} {
		if !seen[want] {
			t.Errorf("no figure %s", want)
		}
	}
}

// TestQueryAnswersAreNotEmpty guards the comparison: an answer both sides
// leave empty would agree without checking anything.
func TestQueryAnswersAreNotEmpty(t *testing.T) {
	mem := memory.NewGoAllocator()
	batches, err := Generate(mem, Config{Seed: 3, EventRate: tinySize.EventRate}, tinySize)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := range batches {
			batches[i].Release()
		}
	}()
	for _, q := range queries {
		if n := len(runPeer(q, batches).answer); n == 0 {
			t.Errorf("%s: empty answer on the test data", q.name)
		}
	}
}

func TestWorkloadsCoverQueries(t *testing.T) {
	ws := Workloads()
	if len(ws) != len(queries) {
		t.Fatalf("%d workloads for %d queries", len(ws), len(queries))
	}
	for i, w := range ws {
		if w.Name != "nexmark-"+queries[i].name || w.Run == nil || w.Description == "" {
			t.Errorf("workload %+v", w)
		}
	}
	// The workload itself, as the bench command runs it, in quick mode.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cfg := harness.Config{Quick: true, Seed: 1, Mem: mem, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	figs, err := ws[2].Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, "nexmark-q2", figs)
	if _, err := RunQuery(context.Background(), harness.Config{}, "q99", tinySize); err == nil {
		t.Error("unknown query accepted")
	}
	if _, err := RunQuery(context.Background(), harness.Config{}, "q0", Size{}); err == nil {
		t.Error("empty size accepted")
	}
}

// TestEngineCPUCountsTheStop: the engine's CPU figure counts stopping the
// query after its epochs, which waits for the background snapshots the
// epochs started (they ran after the last epoch's span before, counted
// in no figure), and the answer is still read after the stop.
func TestEngineCPUCountsTheStop(t *testing.T) {
	if _, ok := harness.ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	q, _ := lookup("q5")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batches, err := Generate(mem, Config{Seed: 3, EventRate: tinySize.EventRate}, tinySize)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBatches(batches)
	run, err := runEngine(context.Background(), mem, t.TempDir(), q, batches, 0)
	if err != nil {
		t.Fatal(err)
	}
	if run.stopCPU <= 0 || run.cpu < run.stopCPU {
		t.Errorf("engine CPU %v, of which the stop %v: the stop is not counted", run.cpu, run.stopCPU)
	}
	if len(run.answer) == 0 {
		t.Error("no answer read after the stop")
	}
}

// TestEngineCPULeavesOutTheMeter: the engine's CPU figure (the linearity
// series' cost) counts the query's start and the read of its answer but
// not the memory meter's collections, which mark the whole process heap:
// with a heap of 2M live pointers, one collection costs more than a small
// run's start, epochs, stop and answer together, so a figure that counted
// the meter's baseline collection (as the series did before session 39)
// would be larger than half of one.
func TestEngineCPULeavesOutTheMeter(t *testing.T) {
	if _, ok := harness.ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	type node struct {
		next *node
		pad  [2]int64
	}
	var live *node
	for range 2_000_000 {
		live = &node{next: live}
	}
	runtime.GC()
	gc0, _ := harness.ProcessCPU()
	runtime.GC()
	gc1, _ := harness.ProcessCPU()
	oneGC := gc1 - gc0

	q, _ := lookup("q7")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batches, err := Generate(mem, Config{Seed: 3, EventRate: tinySize.EventRate}, tinySize)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBatches(batches)
	run, err := runEngine(context.Background(), mem, t.TempDir(), q, batches, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(live)
	if run.startCPU <= 0 {
		t.Errorf("start CPU %v: the query's start is not counted", run.startCPU)
	}
	if got, want := run.engineCPU(), run.startCPU+run.cpu+run.answerCPU; got != want {
		t.Errorf("engine CPU %v, want start %v + epochs and stop %v + answer %v", got, run.startCPU, run.cpu, run.answerCPU)
	}
	// Half a collection: the run itself is a few ms here, the
	// collection tens of ms, and counting it would add at least one.
	if run.engineCPU() >= oneGC/2 {
		t.Errorf("engine CPU %v (start %v) is not below half a collection of the heap (%v): the meter's collections are counted", run.engineCPU(), run.startCPU, oneGC)
	}
	t.Logf("engine CPU %v (start %v, answer %v), one collection %v", run.engineCPU(), run.startCPU, run.answerCPU, oneGC)
}

// TestEngineAnswerFormattedAside: formatting the answer's rows for the
// comparison with the peer (canonRows) is the harness's work, taken
// aside of the answer's CPU: q20's answer holds every matching bid with
// its auction's strings, and its formatting was a third of q20's
// linearity figure.
func TestEngineAnswerFormattedAside(t *testing.T) {
	if _, ok := harness.ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	q, _ := lookup("q20")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	batches, err := Generate(mem, Config{Seed: 3, EventRate: tinySize.EventRate}, tinySize)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBatches(batches)
	run, err := runEngine(context.Background(), mem, t.TempDir(), q, batches, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.answer) < 100 {
		t.Fatalf("answer of %d rows: too few to measure their formatting", len(run.answer))
	}
	if run.formatCPU <= 0 {
		t.Errorf("answer of %d rows formatted in %v: the formatting is not taken aside of the answer's CPU %v", len(run.answer), run.formatCPU, run.answerCPU)
	}
	t.Logf("answer of %d rows: read %v, formatted %v", len(run.answer), run.answerCPU, run.formatCPU)
}

// TestJoinLagAtFinalWatermark runs q4, q6 and q9 on seed 66, whose events
// have an auction expiring exactly at the final global watermark: the
// aggregation (q4, q6) or top-1 (q9) over the join sees the join's output
// watermark, a millisecond behind (joinLag), and does not close it. A
// peer closing the auctions at the global watermark disagrees with the
// engine here only.
func TestJoinLagAtFinalWatermark(t *testing.T) {
	for _, name := range []string{"q4", "q6", "q9"} {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			cfg := harness.Config{Quick: true, Seed: 66, Mem: mem, Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
			if _, err := RunQuery(context.Background(), cfg, name, tinySize); err != nil {
				t.Fatal(err)
			}
		})
	}
}
