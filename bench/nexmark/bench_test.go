package nexmark

import (
	"context"
	"flag"
	"log/slog"
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
)

var fullSize = flag.Bool("nexmark.full", false, "run BenchmarkQuery at FullSize instead of QuickSize")

// BenchmarkQuery runs each query once per iteration at QuickSize (FullSize
// with -args -nexmark.full) through
// the engine and its Go peer (answers checked) and reports the engine's
// events/s, its epoch latency p99, peak memory, and the peer's events/s
// with the ratio, then the same rates per CPU-second of the process
// (getrusage) with their ratio (cpu-ratio: the one that means something on
// a loaded machine), all measured in the same run.
//
//	go test -run XXX -bench Query -benchtime 1x ./bench/nexmark/ [-args -nexmark.full]
func BenchmarkQuery(b *testing.B) {
	size := QuickSize
	if *fullSize {
		size = FullSize
	}
	for _, name := range QueryNames() {
		b.Run(name, func(b *testing.B) {
			// No Mem: the input is generated outside the Go heap and the
			// engine runs on Go's allocator (see RunQuery).
			cfg := harness.Config{Quick: true, Seed: 1, Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)}
			sums := map[string]float64{}
			for b.Loop() {
				figs, err := RunQuery(context.Background(), cfg, name, size)
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range figs {
					sums[f.Figure+"/"+f.Peer] += f.Value
					if f.Peer != "" {
						sums["ratio/"+f.Figure] += f.Ratio
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(sums["events/s/"]/n, "events/s")
			b.ReportMetric(sums["epoch_latency_p50/"]/n, "p50-ms")
			b.ReportMetric(sums["epoch_latency_p99/"]/n, "p99-ms")
			b.ReportMetric(sums["peak_memory/"]/n/(1<<20), "peak-MiB")
			b.ReportMetric(sums["events/s/"+peerName]/n, "peer-events/s")
			b.ReportMetric(sums["ratio/events/s"]/n, "ratio")
			b.ReportMetric(sums["events/cpu-s/"]/n, "events/cpu-s")
			b.ReportMetric(sums["events/cpu-s/"+peerName]/n, "peer-events/cpu-s")
			b.ReportMetric(sums["ratio/events/cpu-s"]/n, "cpu-ratio")
			b.ReportMetric(sums["peak_rss_per_held_byte/"]/n, "rss/held")
			b.ReportMetric(sums["peak_held/"]/n/(1<<20), "held-MiB")
			b.ReportMetric(sums["peak_rss_growth/"]/n/(1<<20), "rss-growth-MiB")
			b.ReportMetric(sums["rss_growth_per_held_byte/"]/n, "rss-growth/held")
		})
	}
}
