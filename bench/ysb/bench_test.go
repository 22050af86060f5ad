package ysb

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkEngine runs the query through the engine over 16 epochs of 1M
// events (64K-row batches) per iteration; ns/op is per run, events/s is the
// throughput.
func BenchmarkEngine(b *testing.B) {
	const epochs, perEpoch, batch = 16, 1 << 20, 64 << 10
	d := Generate(epochs*perEpoch, 1_000_000, 1)
	want := d.Reference(0, d.Len())
	for _, enc := range []Encoding{Plain, Dict} {
		b.Run(enc.String(), func(b *testing.B) {
			pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
			defer pool.Close()
			camp := d.CampaignRecord(pool, enc)
			defer camp.Release()
			var eps [][]arrow.Record
			for e := range epochs {
				eps = append(eps, d.Records(pool, enc, e*perEpoch, (e+1)*perEpoch, batch))
			}
			defer releaseEpochs(eps)
			var total float64
			for b.Loop() {
				res, err := RunEngine(context.Background(), EngineOptions{Mem: pool, CheckpointRoot: b.TempDir()}, camp, eps)
				if err != nil {
					b.Fatal(err)
				}
				if diff := Diff(res.Answer, want); diff != "" {
					b.Fatal(diff)
				}
				total += res.Elapsed.Seconds()
			}
			b.ReportMetric(float64(d.Len())*float64(b.N)/total, "events/s")
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
