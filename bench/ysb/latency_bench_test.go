package ysb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// when the query fell behind the input). With fsync it also reports
// disk-sync-p50-ms and disk-sync-p99-ms: a 512-byte append and sync paced
// the same way in the same run, without the engine, the floor under the
// epochs' latency (an epoch's rows are visible only after its durable
// write).
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
				if sync {
					// What one durable write costs on this disk now: the
					// floor under the fsync p99 (every epoch's rows wait
					// for one).
					disk, err := diskSyncLatencies(b.TempDir(), epochs, pace)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(ms(harness.Percentile(disk, 50)), "disk-sync-p50-ms")
					b.ReportMetric(ms(harness.Percentile(disk, 99)), "disk-sync-p99-ms")
				}
			})
		}
	}
}

// diskSyncLatencies times n appends of 512 bytes to a file in dir, each
// followed by a sync, one per pace: what the epoch log's one durable write
// per epoch costs on this disk in the same run, without the engine.
func diskSyncLatencies(dir string, n int, pace time.Duration) ([]time.Duration, error) {
	f, err := os.OpenFile(filepath.Join(dir, "sync-probe"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 512)
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("sync probe: %w", err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("sync probe: %w", err)
		}
		took := time.Since(start)
		out = append(out, took)
		time.Sleep(max(pace-took, 0))
	}
	return out, nil
}
