package agg

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"

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
// its input. Each size runs -linearity.runs times (3) and its median
// counts: on a shared machine one run's CPU varies by a third, which
// hid the trend in the noise. Opt-in, as it takes minutes:
//
//	go test -v -run XXX -bench WindowedLinearity -benchtime 1x -timeout 1h ./bench/agg/ -args -linearity
func BenchmarkWindowedLinearity(b *testing.B) {
	if !*linearity {
		b.Skip("opt-in: -args -linearity")
	}
	const epochRows, keys = 50_000, 10_000
	series := harness.Series{Workload: "windowed"}
	// A warm-up run, not measured: the process's first query pays for
	// growing the heap and starting the codecs, which would otherwise be
	// charged to the smallest size.
	warm := gen.Windowed(4, epochRows, keys, 2)
	warmRecs := warm.Records(memory.NewGoAllocator())
	if _, err := RunWindowed(context.Background(), memory.NewGoAllocator(), warmRecs, b.TempDir(), false); err != nil {
		b.Fatal(err)
	}
	release(warmRecs)
	for _, size := range harness.LinearitySizes {
		d := gen.Windowed(size/epochRows, epochRows, keys, 1)
		recs := d.Records(memory.NewGoAllocator())
		b.Run(fmt.Sprintf("events=%d", size), func(b *testing.B) {
			pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
			defer pool.Close()
			var costs []float64
			for b.Loop() {
				for range max(*linearityRuns, 1) {
					sp := harness.StartSpan()
					got, err := RunWindowed(context.Background(), pool, recs, b.TempDir(), false)
					_, cpu := sp.Stop()
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if err := d.Check(got); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					costs = append(costs, float64(cpu.Nanoseconds())/float64(d.Rows()))
				}
			}
			slices.Sort(costs)
			cost := costs[len(costs)/2]
			b.ReportMetric(cost, "cpu-ns/event")
			series.Add(d.Rows(), cost)
		})
		release(recs)
	}
	b.Log(series.String())
}
