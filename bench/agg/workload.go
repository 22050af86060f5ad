package agg

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
	"github.com/arrowstream/arrowstream/vector"
)

// Sizes are the data-set sizes of one run.
type Sizes struct {
	AggRows                          int
	AggKeys                          []int
	WinEpochs, WinEpochRows, WinKeys int
	Reps                             int
}

// SizesFor returns the full or the quick sizes.
func SizesFor(quick bool) Sizes {
	if quick {
		return Sizes{AggRows: 1 << 20, AggKeys: []int{1000, 100_000}, WinEpochs: 8, WinEpochRows: 64 << 10, WinKeys: 10_000, Reps: 1}
	}
	return Sizes{AggRows: 10_000_000, AggKeys: []int{1000, 100_000, 1_000_000}, WinEpochs: 32, WinEpochRows: 64 << 10, WinKeys: 10_000, Reps: 3}
}

// AggWorkloadName is the figure workload of the hash aggregation with
// nKeys keys: agg-1k, agg-100k, agg-1m.
func AggWorkloadName(nKeys int) string {
	switch {
	case nKeys >= 1_000_000 && nKeys%1_000_000 == 0:
		return fmt.Sprintf("agg-%dm", nKeys/1_000_000)
	case nKeys >= 1000 && nKeys%1000 == 0:
		return fmt.Sprintf("agg-%dk", nKeys/1000)
	}
	return fmt.Sprintf("agg-%d", nKeys)
}

// Workloads returns "agg" and "windowed" (see the package comment); o says
// where the DuckDB peer module is and whether it is skipped.
func Workloads(o ysb.Options) []harness.Workload {
	return []harness.Workload{
		{Name: "agg", Description: "hash aggregation SUM(float64), COUNT(*) GROUP BY int64 with 1e3/1e5/1e6 keys, SQL over Arrow records, beside DuckDB and Go maps",
			Run: func(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
				return runAgg(ctx, cfg, o, SizesFor(cfg.Quick))
			}},
		{Name: "windowed", Description: "10 s tumbling-window count per key with a watermark, Append, a streaming query epoch by epoch, beside DuckDB and Go maps",
			Run: func(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
				return runWindowed(ctx, cfg, o, SizesFor(cfg.Quick))
			}},
	}
}

const aggRelTol = 1e-9

func runAgg(ctx context.Context, cfg harness.Config, o ysb.Options, sz Sizes) ([]harness.Figure, error) {
	var figs []harness.Figure
	ours := map[string]float64{}
	rows := map[string]int{}
	// Input records are the harness's, not the engine's memory: outside
	// the Go heap (the generator's slices are dead once they are built).
	input := harness.InputAllocator()
	for _, nk := range sz.AggKeys {
		wl := AggWorkloadName(nk)
		keys, vals := gen.AggData(sz.AggRows, nk, cfg.Seed)
		want := gen.AggReference(keys, vals)
		recs := gen.AggRecords(input, keys, vals, gen.DefaultBatchRows)
		check := func(got map[int64]gen.AggGroup) error { return gen.CheckAgg(want, got, aggRelTol) }
		meter := harness.StartMemory()
		rate, peak, err := measure(sz.Reps, sz.AggRows, func(mem memory.Allocator) (func() error, error) {
			got, err := RunAgg(ctx, mem, recs)
			return func() error {
				groups, err := got.Groups()
				if err != nil {
					return err
				}
				return check(groups)
			}, err
		})
		if err != nil {
			release(recs)
			return nil, fmt.Errorf("%s: %w", wl, err)
		}
		meter.Stop()
		rssFig := meter.Figures(wl)
		peer, _, err := measure(sz.Reps, sz.AggRows, func(memory.Allocator) (func() error, error) {
			got, err := GoAgg(recs)
			return func() error { return check(got) }, err
		})
		release(recs)
		if err != nil {
			return nil, fmt.Errorf("%s: go peer: %w", wl, err)
		}
		cfg.Logger.Info("measured", "workload", wl, "rows/s/core", rate, "go-maps", peer)
		figs = append(figs,
			harness.Figure{Workload: wl, Figure: "throughput", Value: rate, Unit: "rows/s/core"},
			harness.Figure{Workload: wl, Figure: "peak_memory", Value: float64(peak), Unit: "bytes"},
			harness.Figure{Workload: wl, Figure: "throughput", Value: peer, Unit: "rows/s/core", Peer: "go-maps", Ratio: ratio(rate, peer)})
		figs = append(figs, rssFig...)
		ours[wl], rows[wl] = rate, sz.AggRows
	}
	keyList := make([]string, len(sz.AggKeys))
	for i, k := range sz.AggKeys {
		keyList[i] = strconv.Itoa(k)
	}
	duck, err := runDuckDB(ctx, cfg, o, duckArgs{workload: "agg", rows: rows,
		flags: []string{"-rows", fmt.Sprint(sz.AggRows), "-keys", strings.Join(keyList, ",")}}, ours, sz.Reps)
	if err != nil {
		return nil, err
	}
	return append(figs, duck...), nil
}

func runWindowed(ctx context.Context, cfg harness.Config, o ysb.Options, sz Sizes) ([]harness.Figure, error) {
	const wl = "windowed"
	d := gen.Windowed(sz.WinEpochs, sz.WinEpochRows, sz.WinKeys, cfg.Seed)
	// The input is the harness's: outside the Go heap, in the baseline.
	recs := d.Records(harness.InputAllocator())
	defer release(recs)
	n := d.Rows()
	// The records hold the input now: the generator's Go slices (16 bytes
	// per row in the Go heap, which would raise the collector's heap goal
	// during the runs) go; the answer check needs only d.Want.
	d.Keys, d.TS = nil, nil
	meter, err := harness.StartMemoryFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wl, err)
	}
	defer meter.Stop()
	rate, peak, err := measure(sz.Reps, n, func(mem memory.Allocator) (func() error, error) {
		dir, err := os.MkdirTemp(cfg.Dir, "windowed-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		got, err := RunWindowedObserved(ctx, mem, recs, dir, false, meter.ObserveHeld)
		return func() error { return d.Check(got.Rows()) }, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wl, err)
	}
	meter.Stop()
	rssFig := meter.Figures(wl)
	peer, _, err := measure(sz.Reps, n, func(memory.Allocator) (func() error, error) {
		got, err := GoWindowed(recs)
		return func() error { return d.Check(got.Rows()) }, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: go peer: %w", wl, err)
	}
	cfg.Logger.Info("measured", "workload", wl, "rows/s/core", rate, "go-maps", peer)
	figs := []harness.Figure{
		{Workload: wl, Figure: "throughput", Value: rate, Unit: "rows/s/core"},
		{Workload: wl, Figure: "peak_memory", Value: float64(peak), Unit: "bytes"},
		{Workload: wl, Figure: "throughput", Value: peer, Unit: "rows/s/core", Peer: "go-maps", Ratio: ratio(rate, peer)},
	}
	figs = append(figs, rssFig...)
	duck, err := runDuckDB(ctx, cfg, o, duckArgs{workload: wl, rows: map[string]int{wl: n},
		flags: []string{"-epochs", fmt.Sprint(sz.WinEpochs), "-epochrows", fmt.Sprint(sz.WinEpochRows), "-keys", fmt.Sprint(sz.WinKeys)}},
		map[string]float64{wl: rate}, sz.Reps)
	if err != nil {
		return nil, err
	}
	return append(figs, duck...), nil
}

// measure runs fn reps times, timed, then, untimed, the check it returns
// (a wrong answer is an error, never a figure), and returns the median rows
// per CPU-second and the largest number of bytes its allocator held. fn
// gets a pooling allocator kept across runs, as the engine keeps one.
// (Removing the checkpoint directory of a windowed run is inside the timed
// part; it is small next to the run.)
func measure(reps, rows int, fn func(memory.Allocator) (check func() error, err error)) (float64, int64, error) {
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	mem := harness.NewPeakAllocator(pool)
	var rates []float64
	for r := range max(reps, 1) {
		sp := harness.StartSpan()
		check, err := fn(mem)
		wall, cpu := sp.Stop()
		if err == nil {
			err = check()
		}
		if err != nil {
			return 0, 0, fmt.Errorf("run %d: %w", r, err)
		}
		rates = append(rates, harness.PerCore(float64(rows), wall, cpu))
	}
	return harness.Median(rates), mem.Peak(), nil
}

func release(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
