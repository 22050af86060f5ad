package agg

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// windowedFull makes BenchmarkWindowed run the data set of arrowstream
// bench windowed (32 epochs), whose state snapshots more often than the
// quick one's.
var windowedFull = flag.Bool("windowed.full", false, "BenchmarkWindowed over the full data set (32 epochs), as arrowstream bench windowed")

// BenchmarkWindowed runs the windowed workload's engine path and its Go
// peer on the quick data set (8 epochs × 64K rows, 10K keys; -args
// -windowed.full: the full one), for profiling: go test -run '^$' -bench
// 'Windowed/engine' -cpuprofile w.prof.
func BenchmarkWindowed(b *testing.B) {
	sz := SizesFor(!*windowedFull)
	d := gen.Windowed(sz.WinEpochs, sz.WinEpochRows, sz.WinKeys, 1)
	recs := d.Records(memory.NewGoAllocator())
	defer release(recs)
	ctx := context.Background()
	// cpu-ns/row is the process's CPU over the runs (every thread, the
	// answer checks excluded): what arrowstream bench compares, and far
	// steadier than wall time on a loaded machine.
	b.Run("engine", func(b *testing.B) {
		pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
		defer pool.Close()
		var cpu time.Duration
		for b.Loop() {
			sp := harness.StartSpan()
			got, err := RunWindowed(ctx, pool, recs, b.TempDir(), false)
			_, c := sp.Stop()
			cpu += c
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := d.Check(got.Rows()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(d.Rows())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/(float64(d.Rows())*float64(b.N)), "cpu-ns/row")
	})
	b.Run("go-maps", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			sp := harness.StartSpan()
			_, err := GoWindowed(recs)
			_, c := sp.Stop()
			cpu += c
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(d.Rows())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/(float64(d.Rows())*float64(b.N)), "cpu-ns/row")
	})
}

// BenchmarkAgg runs the agg workload's engine path and its Go peer on 1 M
// rows with 1e3 and 1e5 keys.
func BenchmarkAgg(b *testing.B) {
	ctx := context.Background()
	for _, nk := range []int{1000, 100_000} {
		keys, vals := gen.AggData(1<<20, nk, 1)
		recs := gen.AggRecords(memory.NewGoAllocator(), keys, vals, gen.DefaultBatchRows)
		b.Run(fmt.Sprintf("keys=%d/engine", nk), func(b *testing.B) {
			pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
			defer pool.Close()
			for b.Loop() {
				if _, err := RunAgg(ctx, pool, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("keys=%d/go-maps", nk), func(b *testing.B) {
			for b.Loop() {
				if _, err := GoAgg(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		release(recs)
	}
}

// BenchmarkWindowedMemory runs the windowed workload's engine path once
// per iteration (the quick data set, input outside the Go heap) and
// reports the process's memory against what the query holds (see
// harness.MemoryMeter): go test -run '^$' -bench WindowedMemory
// -benchtime 1x ./bench/agg/.
func BenchmarkWindowedMemory(b *testing.B) {
	sz := SizesFor(true)
	d := gen.Windowed(sz.WinEpochs, sz.WinEpochRows, sz.WinKeys, 1)
	recs := d.Records(harness.InputAllocator())
	defer release(recs)
	d.Keys, d.TS = nil, nil // the records hold the input
	ctx := context.Background()
	for b.Loop() {
		pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
		m := harness.StartMemory()
		got, err := RunWindowedObserved(ctx, pool, recs, b.TempDir(), false, m.ObserveHeld)
		m.Stop()
		pool.Close()
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Check(got.Rows()); err != nil {
			b.Fatal(err)
		}
		harness.ReportMemory(b, m)
	}
}
