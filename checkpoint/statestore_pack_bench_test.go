//go:build linux

package checkpoint

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuNow is the process's user and system CPU time so far.
func cpuNow(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshotPacks: one operator's 200 partitions (Spark's default
// shuffle partitions), each changing a few keys every epoch through the
// changelog, group-committed, maintenance waited for after each epoch,
// 24 epochs per run: the snapshots that fall due together written as one
// pack per version against a file per partition (PartitionSnapshotFiles,
// as before packs), with and without fsync. Reports the snapshot files
// written per run, the process's CPU time per run (getrusage: user and
// system, background maintenance included) and the wall time the epochs
// waited for maintenance.
func BenchmarkSnapshotPacks(b *testing.B) {
	const parts, epochs = 200, 24
	for _, sync := range []bool{false, true} {
		for _, perPartition := range []bool{true, false} {
			b.Run(fmt.Sprintf("fsync=%v/perPartition=%v", sync, perPartition), func(b *testing.B) {
				opts := StoreOptions{MinDeltasForSnapshot: 10, PartitionSnapshotFiles: perPartition}
				var files int
				var maint, cpu time.Duration
				for range b.N {
					b.StopTimer()
					var fc fileCounter
					w := fc.writer()
					w.NoSync = !sync
					q := openGroupQuery(b, b.TempDir(), w, parts, opts)
					b.StartTimer()
					cpu0 := cpuNow(b)
					for v := range int64(epochs) {
						if err := q.run(v, churn(v, parts), true); err != nil {
							b.Fatal(err)
						}
						start := time.Now()
						for _, p := range q.parts {
							if err := p.(*StorePartition).WaitMaintenance(); err != nil {
								b.Fatal(err)
							}
						}
						maint += time.Since(start)
					}
					b.StopTimer()
					cpu += cpuNow(b) - cpu0
					if err := q.prov.Close(); err != nil {
						b.Fatal(err)
					}
					files += fc.get("pack") + fc.get("snapshot")
					b.StartTimer()
				}
				b.ReportMetric(float64(files)/float64(b.N), "files/op")
				b.ReportMetric(float64(maint.Nanoseconds())/float64(b.N), "maint-wait-ns/op")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
