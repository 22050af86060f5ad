package nexmark

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// Size is how much data one query's run processes.
type Size struct {
	// Events in all; EpochEvents per epoch (one generated batch each).
	Events, EpochEvents int
	// EventRate spaces the events' timestamps (events per second of event
	// time; 0: the generator's default, 10 000). Tests raise the event
	// time covered by few events with a lower rate.
	EventRate int64
}

// Sizes of a run. Quick mode keeps the whole Nexmark set well under 30
// seconds on 2 cores: few events, spaced at 1000 events/s of event time so
// that they still cover 40 s and windows close. The full run covers 20 s
// at the generator's default rate of 10 000 events/s: larger runs are
// dominated by the stream-stream joins, whose epochs re-read their whole
// state (README.md).
var (
	QuickSize = Size{Events: 40_000, EpochEvents: 5_000, EventRate: 1_000}
	FullSize  = Size{Events: 200_000, EpochEvents: 10_000}
)

// peerName names the Go peer in figures.
const peerName = "go-maps"

// Workloads returns one workload per query that runs here ("nexmark-q0",
// ...): it generates the events (not timed), runs the query through the
// engine and its Go peer on the same batches, checks that their answers
// agree, and reports events/s, events/s per core, the epoch latency p50
// and p99, the engine's peak Arrow memory, and the peer's events/s with
// the ratio.
func Workloads() []harness.Workload {
	ws := make([]harness.Workload, len(queries))
	for i, q := range queries {
		ws[i] = harness.Workload{
			Name:        "nexmark-" + q.name,
			Description: "Nexmark " + q.name + ": " + q.title,
			Run: func(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
				size := FullSize
				if cfg.Quick {
					size = QuickSize
				}
				return RunQuery(ctx, cfg, q.name, size)
			},
		}
	}
	return ws
}

// QueryNames lists the queries Workloads runs, in order.
func QueryNames() []string {
	names := make([]string, len(queries))
	for i, q := range queries {
		names[i] = q.name
	}
	return names
}

func lookup(name string) (query, bool) {
	for _, q := range queries {
		if q.name == name {
			return q, true
		}
	}
	return query{}, false
}

// RunQuery runs one query ("q5") at size and returns its figures, or an
// error naming the workload when the engine fails or its answer differs
// from the Go peer's.
func RunQuery(ctx context.Context, cfg harness.Config, name string, size Size) ([]harness.Figure, error) {
	workload := "nexmark-" + name
	q, ok := lookup(name)
	if !ok {
		return nil, fmt.Errorf("%s: no such Nexmark query (have %v)", workload, QueryNames())
	}
	if size.Events <= 0 || size.EpochEvents <= 0 {
		return nil, fmt.Errorf("%s: size %+v: events and epoch events must be positive", workload, size)
	}
	// The input lives outside the Go heap (unless the caller chose the
	// allocator): it is the harness's, not the engine's, and must not
	// raise the collector's heap goal during the engine's run.
	mem, input := cfg.Mem, cfg.Mem
	if mem == nil {
		mem, input = memory.NewGoAllocator(), harness.InputAllocator()
	}
	batches, err := Generate(input, Config{Seed: cfg.Seed, EventRate: size.EventRate}, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", workload, err)
	}
	defer func() {
		for i := range batches {
			batches[i].Release()
		}
	}()
	dir, err := os.MkdirTemp(cfg.Dir, "nexmark-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: scratch directory: %w", workload, err)
	}
	defer os.RemoveAll(dir)

	eng, err := runEngine(ctx, mem, dir, q, batches, cfg.MemoryTarget)
	if err != nil {
		return nil, fmt.Errorf("%s: engine: %w", workload, err)
	}
	peer := runPeer(q, batches)
	if d := diffRows(eng.answer, peer.answer); d != "" {
		return nil, fmt.Errorf("%s: the engine's answer differs from the Go peer's: %s", workload, d)
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("nexmark", "query", name, "events", eng.events, "epochs", len(batches),
			"engine", eng.elapsed, "peer", peer.elapsed, "answer_rows", len(eng.answer),
			"state_rows", eng.stateRows, "peak_state_rows", eng.peakStateRows)
	}
	return figures(workload, eng, peer), nil
}

// Generate produces size.Events events in batches of size.EpochEvents.
func Generate(mem memory.Allocator, cfg Config, size Size) ([]Batch, error) {
	g, err := NewGenerator(mem, cfg)
	if err != nil {
		return nil, err
	}
	var out []Batch
	for g.Generated() < int64(size.Events) {
		b, err := g.Next(min(size.EpochEvents, size.Events-int(g.Generated())))
		if err != nil {
			for i := range out {
				out[i].Release()
			}
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func figures(workload string, eng *engineRun, peer *peerRun) []harness.Figure {
	cores := float64(runtime.GOMAXPROCS(0))
	rate := func(d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return float64(eng.events) / d.Seconds()
	}
	ours, theirs := rate(eng.elapsed), rate(peer.elapsed)
	ratio := 0.0
	if theirs > 0 {
		ratio = ours / theirs
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	figs := []harness.Figure{
		{Workload: workload, Figure: "events/s", Value: ours, Unit: "events/s"},
		{Workload: workload, Figure: "events/s/core", Value: ours / cores, Unit: "events/s/core"},
		{Workload: workload, Figure: "epoch_latency_p50", Value: ms(percentile(eng.latencies, 50)), Unit: "ms"},
		{Workload: workload, Figure: "epoch_latency_p99", Value: ms(percentile(eng.latencies, 99)), Unit: "ms"},
		{Workload: workload, Figure: "peak_memory", Value: float64(eng.peak), Unit: "bytes"},
		{Workload: workload, Figure: "events/s", Value: theirs, Unit: "events/s", Peer: peerName, Ratio: ratio},
		// The peer runs on one goroutine: its events/s is also per core.
		{Workload: workload, Figure: "events/s/core", Value: theirs, Unit: "events/s/core", Peer: peerName, Ratio: ratio / cores},
	}
	// Events per CPU-second (getrusage, all threads), the same way for
	// every workload: on a loaded machine wall-clock rates measure the
	// load as much as the work. Each run starts from a settled heap
	// (harness.Settle); the engine's leaves out the harness's
	// bookkeeping between epochs (harness.Span.Aside) and counts the
	// query's stop, which waits for its background snapshots.
	ourCPU := harness.PerCore(float64(eng.events), eng.elapsed, eng.cpu)
	theirCPU := harness.PerCore(float64(eng.events), peer.elapsed, peer.cpu)
	cpuRatio := 0.0
	if theirCPU > 0 {
		cpuRatio = ourCPU / theirCPU
	}
	if eng.stopCPU > 0 {
		// Stopping the query after the epochs, counted in the engine's
		// CPU: background snapshots the epochs started finish in it.
		figs = append(figs, harness.Figure{Workload: workload, Figure: "engine_stop_cpu", Value: ms(eng.stopCPU), Unit: "ms"})
	}
	if eng.aside > 0 {
		// The CPU of the harness's bookkeeping after each epoch, left out
		// of the engine's figure (none where the OS does not tell).
		figs = append(figs, harness.Figure{Workload: workload, Figure: "harness_cpu_excluded", Value: ms(eng.aside), Unit: "ms"})
	}
	figs = append(figs,
		harness.Figure{Workload: workload, Figure: "events/cpu-s", Value: ourCPU, Unit: "events/s"},
		harness.Figure{Workload: workload, Figure: "events/cpu-s", Value: theirCPU, Unit: "events/s", Peer: peerName, Ratio: cpuRatio})
	// Peak RSS, its growth over the idle baseline (the process with the
	// input generated, outside the Go heap), the held bytes (state plus
	// retained sink bytes) and the ratios.
	figs = append(figs, eng.mem.Figures(workload)...)
	// What the Arrow allocator holds against the held bytes at the end
	// (left out when zero, as other figures that do not apply).
	for _, f := range []harness.Figure{
		{Workload: workload, Figure: "arrow_in_use_at_end", Value: float64(eng.arrowEnd), Unit: "bytes"},
		{Workload: workload, Figure: "held_at_end", Value: float64(eng.heldEnd), Unit: "bytes"},
	} {
		if f.Value > 0 {
			figs = append(figs, f)
		}
	}
	return figs
}
