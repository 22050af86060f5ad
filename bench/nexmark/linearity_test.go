package nexmark

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
)

var linearity = flag.Bool("linearity", false, "run BenchmarkLinearity over 200K..3.2M events (minutes)")

// BenchmarkLinearity runs q4, q5, q7, q11 and q20 through the engine at 200K, 400K,
// 800K, 1.6M and 3.2M events (epochs of 10K events at the generator's
// default rate) and reports the process CPU per event of each run (the
// query's start, its epochs and stop, the read of its answer:
// engineRun.engineCPU; generation, the formatting of the answer's rows
// and the harness's memory figures, whose forced collections cover the
// whole input, are left out) and
// the state rows left after its last epoch,
// then each query's series and its spread. Opt-in, as it takes minutes:
//
//	go test -v -run XXX -bench Linearity -benchtime 1x -timeout 2h ./bench/nexmark/ -args -linearity
func BenchmarkLinearity(b *testing.B) {
	if !*linearity {
		b.Skip("opt-in: -args -linearity")
	}
	for _, name := range []string{"q4", "q5", "q7", "q11", "q20"} {
		q, ok := lookup(name)
		if !ok {
			b.Fatalf("no query %s", name)
		}
		series := harness.Series{Workload: name}
		// A warm-up run of the query, not measured: the first run pays for
		// growing the heap and starting the codecs.
		warm, err := Generate(memory.NewGoAllocator(), Config{Seed: 2}, Size{Events: 50_000, EpochEvents: 10_000})
		if err != nil {
			b.Fatal(err)
		}
		_, err = runEngine(context.Background(), memory.NewGoAllocator(), b.TempDir(), q, warm, 0)
		for i := range warm {
			warm[i].Release()
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range harness.LinearitySizes {
			b.Run(fmt.Sprintf("%s/events=%d", name, size), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				batches, err := Generate(mem, Config{Seed: 1}, Size{Events: size, EpochEvents: 10_000})
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					for i := range batches {
						batches[i].Release()
					}
				}()
				var cpuNs, events float64
				var stateRows int64
				for b.Loop() {
					run, err := runEngine(context.Background(), mem, b.TempDir(), q, batches, 0)
					if err != nil {
						b.Fatal(err)
					}
					cpuNs += float64(run.engineCPU().Nanoseconds())
					events += float64(run.events)
					stateRows = run.stateRows
				}
				cost := cpuNs / events
				b.ReportMetric(cost, "cpu-ns/event")
				// The state left after the last epoch: flat for a query
				// whose state is bounded (q7), growing for one that keeps
				// every row (q20, q4's bids).
				b.ReportMetric(float64(stateRows), "state-rows")
				series.Add(size, cost)
			})
		}
		if len(series.Sizes) > 0 { // not filtered out by -bench
			b.Log(series.String())
		}
	}
}
