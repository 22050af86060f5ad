package nexmark

import (
	"context"
	"flag"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// partitions, when positive, runs BenchmarkEngineEpochs with that many
// shuffle partitions (spark.sql.shuffle.partitions; Spark's default is 200)
// instead of the session's default of GOMAXPROCS.
var partitions = flag.Int("nexmark.partitions", 0, "spark.sql.shuffle.partitions of BenchmarkEngineEpochs (0: the session's default)")

// epochEvents, when positive, runs BenchmarkEngineEpochs's "full" input
// as 1M events in epochs of that many instead of FullSize: large epochs,
// whose partitions run in parallel, for their wall time (ns/op).
var epochEvents = flag.Int("nexmark.epochevents", 0, "events per epoch of BenchmarkEngineEpochs's full input, 1M events in all (0: FullSize)")

// BenchmarkEngineEpochs runs q3, q8, q11, q17 and the stream-stream joins q4,
// q7 and q20 through the engine alone, the input generated once before
// the timer and no peer, so that a CPU profile of it shows the engine and
// not the generator:
//
//	go test -run '^$' -bench EngineEpochs -cpuprofile cpu.prof ./bench/nexmark/
//	go test -run '^$' -bench 'EngineEpochs/q20/full' -benchtime 10x -cpuprofile cpu.prof ./bench/nexmark/
//	go test -run '^$' -bench 'EngineEpochs/q4/full' -benchtime 10x ./bench/nexmark/ -args -nexmark.partitions 200
//	go test -run '^$' -bench 'EngineEpochs/q4/full' -benchtime 3x ./bench/nexmark/ -args -nexmark.epochevents 200000
//
// "full" is FullSize (200K events in 20 epochs of 10K); "empty" is 200
// epochs of the same queries with no rows, what every epoch costs
// outside the operators' per-row work (the loop, the plan's operators
// built over the epoch's input, the state commit, the sink commit).
// It reports CPU per epoch (getrusage over the epochs, every thread),
// the Go heap bytes allocated and the minor page faults taken per epoch
// (both far steadier than CPU on a shared machine: every allocated byte
// is fresh memory in a run this short, and a first touch costs 13–17 µs
// a page here), and, for "full", events per CPU-second. The faults are
// getrusage's ru_minflt: pages trapped one by one and also the pages
// vector's prefault maps with MADV_POPULATE_WRITE (about 7 µs a page with
// the first write after it); perf's page-faults event counts the traps
// only (docs/performance.md, "Session 34: page faults").
func BenchmarkEngineEpochs(b *testing.B) {
	for _, name := range []string{"q3", "q8", "q11", "q17", "q4", "q7", "q20"} {
		q, ok := lookup(name)
		if !ok {
			b.Fatalf("no query %s", name)
		}
		if *partitions > 0 {
			q.conf = map[string]string{"spark.sql.shuffle.partitions": strconv.Itoa(*partitions)}
		}
		b.Run(name+"/full", func(b *testing.B) {
			size := FullSize
			if *epochEvents > 0 {
				size = Size{Events: 1_000_000, EpochEvents: *epochEvents}
			}
			batches, err := Generate(harness.InputAllocator(), Config{Seed: 1}, size)
			if err != nil {
				b.Fatal(err)
			}
			defer releaseBatches(batches)
			engineEpochs(b, q, batches)
		})
		b.Run(name+"/empty", func(b *testing.B) {
			// One generated event of each kind, sliced to no rows: the
			// schemas of real input, 200 epochs of nothing.
			one, err := Generate(harness.InputAllocator(), Config{Seed: 1}, Size{Events: 50, EpochEvents: 50})
			if err != nil {
				b.Fatal(err)
			}
			defer releaseBatches(one)
			batches := make([]Batch, 200)
			for i := range batches {
				batches[i] = Batch{FirstEvent: 0, Events: 0,
					Person: one[0].Person.NewSlice(0, 0), Auction: one[0].Auction.NewSlice(0, 0), Bid: one[0].Bid.NewSlice(0, 0)}
			}
			defer releaseBatches(batches)
			engineEpochs(b, q, batches)
		})
	}
}

func engineEpochs(b *testing.B, q query, batches []Batch) {
	var events, cpu, epochs, alloc, faults int64
	for b.Loop() {
		run, err := runEngine(context.Background(), memory.NewGoAllocator(), b.TempDir(), q, batches, 0)
		if err != nil {
			b.Fatal(err)
		}
		events += run.events
		cpu += run.cpu.Nanoseconds()
		epochs += int64(len(batches))
		alloc += run.allocBytes
		faults += run.faults
	}
	b.ReportMetric(float64(alloc)/float64(epochs), "heap-B/epoch")
	if faults >= 0 {
		b.ReportMetric(float64(faults)/float64(epochs), "faults/epoch")
	}
	if events > 0 {
		b.ReportMetric(float64(events)/(float64(cpu)/1e9), "events/cpu-s")
	}
	b.ReportMetric(float64(cpu)/float64(epochs), "cpu-ns/epoch")
}
