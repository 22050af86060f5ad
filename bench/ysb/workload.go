package ysb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// Options configure the YSB workload beyond harness.Config.
type Options struct {
	// DuckDBDir is the directory of the DuckDB peer module
	// (bench/peers/duckdb); empty skips the DuckDB peers.
	DuckDBDir string
	// DuckDBSkip, when not empty, is why the DuckDB peers are skipped (no
	// Go toolchain, no C compiler, --quick).
	DuckDBSkip string
}

// sizes of a run.
type sizes struct {
	epochs, perEpoch, batch int
	reps                    int
	pacedEpochs, pacedRows  int
	jsonEvents              int
}

func sizesFor(quick bool) sizes {
	if quick {
		return sizes{epochs: 8, perEpoch: 256 << 10, batch: 64 << 10, reps: 1, pacedEpochs: 50, pacedRows: 10_000, jsonEvents: 50_000}
	}
	return sizes{epochs: 16, perEpoch: 1 << 20, batch: 64 << 10, reps: 3, pacedEpochs: 300, pacedRows: 10_000, jsonEvents: 500_000}
}

// EventsPerSecond is the event-time rate of the generated stream; the
// paced latency run also feeds events at this wall-clock rate (the issue's
// "epoch latency at 1 M events/s").
const EventsPerSecond = 1_000_000

// Workloads returns the YSB workload "ysb": the engine on
// dictionary-encoded and plain Arrow input and on JSON lines, the Go peer,
// DuckDB. (Serving the events over Flight is the "flight" workload of
// package bench/serving; the published figures of other engines are added
// beside the run's figures from package bench/published.)
func Workloads(o Options) []harness.Workload {
	return []harness.Workload{
		{Name: "ysb", Description: "Yahoo Streaming Benchmark: filter views, join ad→campaign, 10 s tumbling count per campaign, through the engine", Run: func(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
			return run(ctx, cfg, o)
		}},
	}
}

func run(ctx context.Context, cfg harness.Config, o Options) ([]harness.Figure, error) {
	sz := sizesFor(cfg.Quick)
	n := sz.epochs * sz.perEpoch
	d := Generate(n, EventsPerSecond, cfg.Seed)
	want := d.Reference(0, n)
	// The input records are the harness's, not the engine's memory: they
	// live outside the Go heap and are built before each measured run (so
	// that they are part of its memory baseline). The generator's own
	// columns (15 bytes per event in the Go heap, which would raise the
	// collector's heap goal during the runs) are dropped meanwhile and
	// generated again, the same events, when needed.
	input := harness.InputAllocator()
	later := max(sz.pacedEpochs*sz.pacedRows, sz.jsonEvents)
	var figs []harness.Figure
	var dictRate float64
	for _, enc := range []Encoding{Dict, Plain} {
		wl := "ysb-" + enc.String()
		if d == nil {
			d = Generate(n, EventsPerSecond, cfg.Seed)
		}
		camp := d.CampaignRecord(input, enc)
		var eps [][]arrow.Record
		for e := range sz.epochs {
			eps = append(eps, d.Records(input, enc, e*sz.perEpoch, (e+1)*sz.perEpoch, sz.batch))
		}
		d = nil
		meter, err := harness.StartMemoryFor(cfg)
		if err != nil {
			releaseEpochs(eps)
			camp.Release()
			return nil, fmt.Errorf("%s: %w", wl, err)
		}
		rate, peak, err := measureEngine(ctx, cfg, camp, eps, n, sz.reps, want, meter.ObserveHeld)
		meter.Stop()
		if err != nil {
			releaseEpochs(eps)
			camp.Release()
			return nil, fmt.Errorf("%s: %w", wl, err)
		}
		cfg.Logger.Info("measured", "workload", wl, "events/s/core", rate)
		figs = append(figs,
			harness.Figure{Workload: wl, Figure: "throughput", Value: rate, Unit: "events/s/core"},
			harness.Figure{Workload: wl, Figure: "peak_memory", Value: float64(peak), Unit: "bytes"})
		figs = append(figs, meter.Figures(wl)...)
		peer, err := measureGoPeer(camp, eps, n, sz.reps, want)
		releaseEpochs(eps)
		camp.Release()
		if err != nil {
			return nil, fmt.Errorf("%s: go peer: %w", wl, err)
		}
		figs = append(figs, harness.Figure{Workload: wl, Figure: "throughput", Value: peer, Unit: "events/s/core", Peer: "go-maps", Ratio: ratio(rate, peer)})
		if enc == Dict {
			dictRate = rate
		}
	}
	d = Generate(min(later, n), EventsPerSecond, cfg.Seed)
	dictCamp, plainCamp := d.CampaignRecord(input, Dict), d.CampaignRecord(input, Plain)
	defer dictCamp.Release()
	defer plainCamp.Release()
	lat, err := measureLatency(ctx, cfg, d, dictCamp, sz)
	if err != nil {
		return nil, fmt.Errorf("ysb-dict latency: %w", err)
	}
	figs = append(figs, lat...)
	js, err := measureJSON(ctx, cfg, d, plainCamp, sz)
	if err != nil {
		return nil, fmt.Errorf("ysb-json: %w", err)
	}
	figs = append(figs, js...)
	duck, err := runDuckDB(ctx, cfg, o, n, dictRate)
	if err != nil {
		return nil, err
	}
	figs = append(figs, duck...)
	return figs, nil
}

func ratio(ours, peer float64) float64 {
	if peer <= 0 {
		return 0
	}
	return ours / peer
}

// measureEngine runs the engine reps times over eps and returns the median
// events/s/core and the largest peak of the engine's allocator. Every run's
// answer is checked; held receives the bytes the query holds after each
// epoch (see EngineOptions.Held).
func measureEngine(ctx context.Context, cfg harness.Config, camp arrow.Record, eps [][]arrow.Record, n, reps int, want Answer, held func(int64)) (float64, int64, error) {
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	mem := harness.NewPeakAllocator(pool)
	var rates []float64
	for r := range reps {
		dir, err := os.MkdirTemp(cfg.Dir, "ysb-")
		if err != nil {
			return 0, 0, err
		}
		res, err := RunEngine(ctx, EngineOptions{Mem: mem, CheckpointRoot: dir, Logger: cfg.Logger, Held: held}, camp, eps)
		os.RemoveAll(dir)
		if err != nil {
			return 0, 0, err
		}
		if diff := Diff(res.Answer, want); diff != "" {
			return 0, 0, fmt.Errorf("run %d: wrong answer: %s", r, diff)
		}
		// Elapsed and CPU cover the query's run, not the session's setup.
		rates = append(rates, harness.PerCore(float64(n), res.Elapsed, res.CPU))
	}
	return harness.Median(rates), mem.Peak(), nil
}

func measureGoPeer(camp arrow.Record, eps [][]arrow.Record, n, reps int, want Answer) (float64, error) {
	var rates []float64
	for range reps {
		sp := harness.StartSpan()
		p, err := NewGoPeer(camp)
		if err != nil {
			return 0, err
		}
		for _, e := range eps {
			for _, r := range e {
				if err := p.Process(r); err != nil {
					return 0, err
				}
			}
		}
		wall, cpu := sp.Stop()
		if diff := Diff(p.Answer(), want); diff != "" {
			return 0, fmt.Errorf("wrong answer: %s", diff)
		}
		rates = append(rates, harness.PerCore(float64(n), wall, cpu))
	}
	return harness.Median(rates), nil
}

// measureLatency feeds dictionary-encoded epochs of pacedRows events at
// EventsPerSecond and reports the p50 and p99 of input accepted → rows
// visible in the memory sink.
func measureLatency(ctx context.Context, cfg harness.Config, d *Data, camp arrow.Record, sz sizes) ([]harness.Figure, error) {
	m := sz.pacedEpochs * sz.pacedRows
	if m > d.Len() {
		return nil, fmt.Errorf("paced run needs %d events, have %d", m, d.Len())
	}
	input := harness.InputAllocator()
	var eps [][]arrow.Record
	for e := range sz.pacedEpochs {
		eps = append(eps, d.Records(input, Dict, e*sz.pacedRows, (e+1)*sz.pacedRows, sz.pacedRows))
	}
	defer releaseEpochs(eps)
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	dir, err := os.MkdirTemp(cfg.Dir, "ysb-paced-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	pace := time.Duration(sz.pacedRows) * time.Second / EventsPerSecond
	res, err := RunEngine(ctx, EngineOptions{Mem: pool, CheckpointRoot: dir, Pace: pace, Logger: cfg.Logger}, camp, eps)
	if err != nil {
		return nil, err
	}
	if diff := Diff(res.Answer, d.Reference(0, m)); diff != "" {
		return nil, fmt.Errorf("wrong answer: %s", diff)
	}
	ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
	return []harness.Figure{
		{Workload: "ysb-dict", Figure: "latency_p50", Value: ms(harness.Percentile(res.Latencies, 50)), Unit: "ms"},
		{Workload: "ysb-dict", Figure: "latency_p99", Value: ms(harness.Percentile(res.Latencies, 99)), Unit: "ms"},
	}, nil
}

// measureJSON decodes JSON lines into records (timed alone) and then
// decodes and runs the query (timed together), so that decoding shows
// apart from processing.
func measureJSON(ctx context.Context, cfg harness.Config, d *Data, camp arrow.Record, sz sizes) ([]harness.Figure, error) {
	m := min(sz.jsonEvents, d.Len())
	lines := d.JSONLines(0, m)
	peak := harness.NewPeakAllocator(memory.NewGoAllocator())
	pool := vector.NewPoolAllocator(peak, 0)
	defer pool.Close()
	sp := harness.StartSpan()
	recs, err := DecodeJSON(pool, lines, sz.batch)
	decWall, decCPU := sp.Stop()
	if err != nil {
		return nil, err
	}
	decodeRate := harness.PerCore(float64(m), decWall, decCPU)
	releaseEpochs([][]arrow.Record{recs})
	dir, err := os.MkdirTemp(cfg.Dir, "ysb-json-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The process's peak RSS and the allocator's peak cover decoding and
	// running the query together, as the throughput does.
	peak.ResetPeak()
	rss := harness.StartRSS()
	sp = harness.StartSpan()
	recs, err = DecodeJSON(pool, lines, sz.batch)
	if err != nil {
		return nil, err
	}
	var eps [][]arrow.Record
	per := max(sz.perEpoch/sz.batch, 1)
	for i := 0; i < len(recs); i += per {
		eps = append(eps, recs[i:min(i+per, len(recs))])
	}
	res, err := RunEngine(ctx, EngineOptions{Mem: pool, CheckpointRoot: filepath.Join(dir, "q"), Logger: cfg.Logger}, camp, eps)
	wall, cpu := sp.Stop()
	releaseEpochs([][]arrow.Record{recs})
	if err != nil {
		return nil, err
	}
	if diff := Diff(res.Answer, d.Reference(0, m)); diff != "" {
		return nil, fmt.Errorf("wrong answer: %s", diff)
	}
	figs := []harness.Figure{
		{Workload: "ysb-json", Figure: "throughput", Value: harness.PerCore(float64(m), wall, cpu), Unit: "events/s/core"},
		{Workload: "ysb-json", Figure: "decode_throughput", Value: decodeRate, Unit: "events/s/core"},
		{Workload: "ysb-json", Figure: "json_bytes_per_event", Value: float64(len(lines)) / float64(m), Unit: "bytes"},
		{Workload: "ysb-json", Figure: "peak_memory", Value: float64(peak.Peak()), Unit: "bytes"},
	}
	return append(figs, harness.RSSFigure("ysb-json", rss)...), nil
}
