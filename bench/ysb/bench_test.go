package ysb

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkEngine runs the query through the engine over 16 epochs of 1M
// events (64K-row batches) per iteration; ns/op is per run, events/s is the
// throughput, and the memory metrics compare the process's RSS growth with
// what the query holds (harness.MemoryMeter; the input is outside the Go
// heap, in the baseline).
func BenchmarkEngine(b *testing.B) {
	const epochs, perEpoch, batch = 16, 1 << 20, 64 << 10
	const n = epochs * perEpoch
	want := Generate(n, 1_000_000, 1).Reference(0, n)
	for _, enc := range []Encoding{Plain, Dict} {
		b.Run(enc.String(), func(b *testing.B) {
			pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
			defer pool.Close()
			input := harness.InputAllocator()
			d := Generate(n, 1_000_000, 1)
			camp := d.CampaignRecord(input, enc)
			defer camp.Release()
			var eps [][]arrow.Record
			for e := range epochs {
				eps = append(eps, d.Records(input, enc, e*perEpoch, (e+1)*perEpoch, batch))
			}
			defer releaseEpochs(eps)
			d = nil // the records hold the input
			m := harness.StartMemory()
			var total float64
			for b.Loop() {
				res, err := RunEngine(context.Background(), EngineOptions{Mem: pool, CheckpointRoot: b.TempDir(), Held: m.ObserveHeld}, camp, eps)
				if err != nil {
					b.Fatal(err)
				}
				if diff := Diff(res.Answer, want); diff != "" {
					b.Fatal(diff)
				}
				total += res.Elapsed.Seconds()
			}
			m.Stop()
			b.ReportMetric(float64(n)*float64(b.N)/total, "events/s")
			harness.ReportMemory(b, m)
		})
	}
}

// BenchmarkGoPeer runs the hand-written Go peer over the same records.
func BenchmarkGoPeer(b *testing.B) {
	const n, batch = 1 << 22, 64 << 10
	d := Generate(n, 1_000_000, 1)
	want := d.Reference(0, n)
	for _, enc := range []Encoding{Plain, Dict} {
		b.Run(enc.String(), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			camp := d.CampaignRecord(mem, enc)
			defer camp.Release()
			recs := d.Records(mem, enc, 0, n, batch)
			defer releaseEpochs([][]arrow.Record{recs})
			for b.Loop() {
				p, err := NewGoPeer(camp)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if err := p.Process(r); err != nil {
						b.Fatal(err)
					}
				}
				if diff := Diff(p.Answer(), want); diff != "" {
					b.Fatal(diff)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
