package ysb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkPacedLatency feeds one epoch every 10 ms, waiting for each to be
// visible in the memory sink, at 1 M events/s (10,000 events per epoch) and
// 10 K events/s (100 per epoch), with durable checkpoints (fsync) and
// without. It reports the p50 and p99 of input accepted → rows visible,
// and keepup: the offered duration (epochs × 10 ms) over the run's
// elapsed time (1 when every epoch finished within its 10 ms slot; below 1
// when the query fell behind the input).
func BenchmarkPacedLatency(b *testing.B) {
	const epochs, pace = 100, 10 * time.Millisecond
	for _, rate := range []struct {
		name string
		rows int
	}{{"rate=1M", 10_000}, {"rate=10K", 100}} {
		d := Generate(epochs*rate.rows, int64(rate.rows)*int64(time.Second/pace), 1)
		want := d.Reference(0, d.Len())
		for _, sync := range []bool{true, false} {
			name := "checkpoint=nosync"
			if sync {
				name = "checkpoint=fsync"
			}
			b.Run(fmt.Sprintf("%s/%s", rate.name, name), func(b *testing.B) {
				pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
				defer pool.Close()
				input := memory.NewGoAllocator()
				camp := d.CampaignRecord(pool, Dict)
				defer camp.Release()
				var eps [][]arrow.Record
				for e := range epochs {
					eps = append(eps, d.Records(input, Dict, e*rate.rows, (e+1)*rate.rows, rate.rows))
				}
				defer releaseEpochs(eps)
				var lat []time.Duration
				var elapsed time.Duration
				for b.Loop() {
					res, err := RunEngine(context.Background(), EngineOptions{Mem: pool, CheckpointRoot: b.TempDir(), Sync: sync, Pace: pace}, camp, eps)
					if err != nil {
						b.Fatal(err)
					}
					if diff := Diff(res.Answer, want); diff != "" {
						b.Fatal(diff)
					}
					lat = append(lat, res.Latencies...)
					elapsed += res.Elapsed
				}
				ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
				b.ReportMetric(ms(harness.Percentile(lat, 50)), "p50-ms")
				b.ReportMetric(ms(harness.Percentile(lat, 99)), "p99-ms")
				b.ReportMetric(float64(b.N)*float64(epochs)*float64(pace)/float64(elapsed), "keepup")
			})
		}
	}
}
