package retain

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/memsink"
)

// TestRunSmall: a short run through the engine keeps every row and
// reports its sizes (figures are for the benchmarks).
func TestRunSmall(t *testing.T) {
	res, err := Run(context.Background(), Config{Epochs: 100, RowsPerEpoch: 20, Dir: t.TempDir(), Sink: memsink.Options{CompactAfter: 8}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 2000 || res.Epochs != 100 || res.Retained < 2000*16 {
		t.Fatalf("result %+v", res)
	}
	t.Logf("%+v ratio %.2f", res, res.Ratio())
}

// BenchmarkSmallEpochs: the table, 18,000 epochs of 20 rows
// (360K rows, 5.8 MB of data), fed through the engine; reports the peak
// RSS growth per retained byte and the bookkeeping per epoch, with
// compaction on (the default) and off.
func BenchmarkSmallEpochs(b *testing.B) {
	for _, c := range []struct {
		name string
		opts memsink.Options
	}{
		{"compaction=on", memsink.Options{}},
		{"compaction=on,offheap", memsink.Options{OffHeap: true}},
		{"compaction=off", memsink.Options{CompactAfter: -1}},
		{"compaction=on,target", memsink.Options{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			target := 0.0
			if strings.HasSuffix(c.name, ",target") {
				target = *targetRatio
			}
			for range b.N {
				res, err := Run(context.Background(), Config{Epochs: 18000, RowsPerEpoch: 20, Dir: b.TempDir(), Sink: c.opts, MemoryTarget: target})
				if err != nil {
					b.Fatal(err)
				}
				report(b, res)
			}
		})
	}
}

// pacedFor is how long BenchmarkSmallEpochsPaced feeds its table (0:
// the benchmark is skipped, so that a pass over every benchmark stays
// short).
var pacedFor = flag.Duration("retain.paced", 0, "run BenchmarkSmallEpochsPaced for this long (e.g. 10m)")

// targetRatio is the memory target of the ",target" cases: the runtime's
// soft memory limit is its baseline plus this many bytes per retained
// byte (internal/memtarget).
var targetRatio = flag.Float64("retain.target", 1.25, "memory target of the ,target cases (runtime bytes per retained byte over the baseline)")

// BenchmarkSmallEpochsPaced: the table at real time, 20 rows per
// 10 ms epoch for -retain.paced (10m: 60,000 epochs, 1.2M rows), with
// compaction on (the default), with merged records off the Go heap and
// under a memory target (-retain.target); logs the resident set against
// the retained bytes every 30 s. Each case is its own process when run
// as
//
//	go test -run '^$' -bench 'SmallEpochsPaced/compaction=on$' -benchtime 1x -timeout 30m ./bench/retain/ -retain.paced 10m
//	go test -run '^$' -bench 'SmallEpochsPaced/compaction=on,target$' -benchtime 1x -timeout 30m ./bench/retain/ -retain.paced 10m
func BenchmarkSmallEpochsPaced(b *testing.B) {
	if *pacedFor <= 0 {
		b.Skip("set -retain.paced (e.g. 10m) to run")
	}
	const pace = 10 * time.Millisecond
	for _, c := range []struct {
		name string
		opts memsink.Options
	}{
		{"compaction=on", memsink.Options{}},
		{"compaction=on,offheap", memsink.Options{OffHeap: true}},
		{"compaction=on,target", memsink.Options{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			target := 0.0
			if strings.HasSuffix(c.name, ",target") {
				target = *targetRatio
			}
			for range b.N {
				res, err := Run(context.Background(), Config{Epochs: int(*pacedFor / pace), RowsPerEpoch: 20, Pace: pace, Dir: b.TempDir(), Sink: c.opts,
					SampleEvery: 30 * time.Second, MemoryTarget: target})
				if err != nil {
					b.Fatal(err)
				}
				report(b, res)
				logSamples(b, res)
			}
		})
	}
}

// logSamples logs the run's figures over time: the resident set's growth
// over the start against the retained bytes.
func logSamples(b *testing.B, res Result) {
	const mib = 1 << 20
	b.Logf("%8s %7s %12s %14s %14s %8s", "elapsed", "epoch", "retained MiB", "RSS growth MiB", "Go heap MiB", "growth/retained")
	for _, s := range res.Samples {
		b.Logf("%8s %7d %12.2f %14.2f %14.2f %8.2f", s.Elapsed.Round(time.Second), s.Epoch, float64(s.Retained)/mib,
			float64(s.RSS-res.StartRSS)/mib, float64(s.HeapObjects)/mib, float64(s.RSS-res.StartRSS)/float64(max(s.Retained, 1)))
	}
}

func report(b *testing.B, res Result) {
	const mib = 1 << 20
	b.ReportMetric(float64(res.Retained)/mib, "retained-MiB")
	b.ReportMetric(float64(res.Size.Bytes)/mib, "arrow-MiB")
	b.ReportMetric(float64(res.Size.Overhead)/float64(max(res.Epochs, 1)), "overhead-B/epoch")
	b.ReportMetric(float64(res.HeapAfterGC)/mib, "heap-MiB")
	b.ReportMetric(float64(res.StartRSS)/mib, "start-rss-MiB")
	b.ReportMetric(float64(res.Growth())/mib, "rss-growth-MiB")
	b.ReportMetric(res.Ratio(), "growth/retained")
	b.ReportMetric(res.CPU.Seconds(), "cpu-s")
	b.ReportMetric(float64(res.PeakRSS)/float64(max(res.Retained, 1)), "peak-rss/retained")
	for _, f := range res.Memory.Figures("") {
		if f.Figure == "gc_cpu_seconds" {
			b.ReportMetric(f.Value, "gc-cpu-s")
		}
	}
	b.ReportMetric(float64(res.AfterGCRSS-res.StartRSS)/mib, "after-drop-gc-MiB")
	b.ReportMetric(float64(res.AfterFreeRSS-res.StartRSS)/mib, "after-drop-free-MiB")
}

// BenchmarkRelease: a large table (128 MiB of rows in 64K-row epochs) is
// dropped; reports how far the resident set comes back over the start,
// after a GC and after debug.FreeOSMemory.
func BenchmarkRelease(b *testing.B) {
	for range b.N {
		res, err := Run(context.Background(), Config{Epochs: 128, RowsPerEpoch: 64 << 10, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		report(b, res)
	}
}

// BenchmarkReleaseQuery: a batch query sorting 8M rows (128 MiB of input,
// 192 MiB of results held) is released; reports how far the resident set
// comes back over the start after a GC, after the session's pool returns
// its free buffers, and after debug.FreeOSMemory (#17: within 50 MB).
func BenchmarkReleaseQuery(b *testing.B) {
	const mib = 1 << 20
	for range b.N {
		res, err := RunQuery(context.Background(), 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Input)/mib, "input-MiB")
		b.ReportMetric(float64(res.PeakRSS-res.StartRSS)/mib, "rss-growth-MiB")
		b.ReportMetric(float64(res.AfterGC-res.StartRSS)/mib, "after-gc-MiB")
		b.ReportMetric(float64(res.AfterPool-res.StartRSS)/mib, "after-pool-close-MiB")
		b.ReportMetric(float64(res.AfterFree-res.StartRSS)/mib, "after-free-MiB")
	}
}

// TestRunQuerySmall: the release run is correct on a small table.
func TestRunQuerySmall(t *testing.T) {
	res, err := RunQuery(context.Background(), 100_000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Input != 1_600_000 {
		t.Fatalf("%+v", res)
	}
}
