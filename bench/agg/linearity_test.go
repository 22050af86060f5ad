package agg

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

var (
	linearity     = flag.Bool("linearity", false, "run BenchmarkWindowedLinearity over 200K..3.2M events (minutes)")
	linearityRuns = flag.Int("linearity.runs", 3, "runs of each size in BenchmarkWindowedLinearity; the median counts")
)

// BenchmarkWindowedLinearity runs the windowed workload's engine path at
// 200K, 400K, 800K, 1.6M and 3.2M events (epochs of 50K events over 10K
// keys, so that the state is the same size and only the number of epochs
// grows) and reports the process CPU per event of each, then the series
// and its spread: the cost of a streaming aggregation must be linear in
// its input. The sizes run in turn, -linearity.runs rounds of all of them
// (3), and each size's median counts: on a shared machine one run's CPU
// varies by a third and the load drifts over minutes, which hid the trend
// in the noise when each size ran once, one after the other. Opt-in, as
// it takes minutes:
//
//	go test -v -run XXX -bench WindowedLinearity -benchtime 1x -timeout 1h ./bench/agg/ -args -linearity
func BenchmarkWindowedLinearity(b *testing.B) {
	if !*linearity {
		b.Skip("opt-in: -args -linearity")
	}
	const epochRows, keys = 50_000, 10_000
	// A warm-up run, not measured: the process's first query pays for
	// growing the heap and starting the codecs, which would otherwise be
	// charged to the smallest size.
	warm := gen.Windowed(4, epochRows, keys, 2)
	warmRecs := warm.Records(memory.NewGoAllocator())
	if _, err := RunWindowed(context.Background(), memory.NewGoAllocator(), warmRecs, b.TempDir(), false); err != nil {
		b.Fatal(err)
	}
	release(warmRecs)
	sizes := harness.LinearitySizes
	data := make([]*gen.WinData, len(sizes))
	recs := make([][]arrow.Record, len(sizes))
	for i, size := range sizes {
		data[i] = gen.Windowed(size/epochRows, epochRows, keys, 1)
		recs[i] = data[i].Records(memory.NewGoAllocator())
	}
	defer func() {
		for _, r := range recs {
			release(r)
		}
	}()
	costs := make([][]float64, len(sizes))
	b.ResetTimer()
	for b.Loop() {
		for range max(*linearityRuns, 1) {
			for i := range sizes {
				pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
				sp := harness.StartSpan()
				got, err := RunWindowed(context.Background(), pool, recs[i], b.TempDir(), false)
				_, cpu := sp.Stop()
				pool.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := data[i].Check(got.Rows()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				costs[i] = append(costs[i], float64(cpu.Nanoseconds())/float64(data[i].Rows()))
			}
		}
	}
	series := harness.Series{Workload: "windowed"}
	for i, size := range sizes {
		slices.Sort(costs[i])
		cost := costs[i][len(costs[i])/2]
		b.ReportMetric(cost, fmt.Sprintf("cpu-ns/event@%d", size))
		series.Add(data[i].Rows(), cost)
	}
	b.Log(series.String())
}
