package memsink_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// BenchmarkPersistEpochs commits small epochs (10 rows) to a persisted
// table with every durable write synced, as `arrowstream serve` runs a
// memory-sink table of a low-rate stream or a cluster instance's share:
// the per-epoch cost of persistence. An op is one epoch; cpu-ns/epoch and
// sys-ns/epoch are the process's CPU time (getrusage), which a loaded
// machine inflates less than the wall time; the syscalls per epoch are
// counted with strace -c -f over the benchmark binary (docs/cluster.md).
// retained: MaxEpochs (0: keep every epoch), so that epochs are evicted
// and their storage trimmed.
func BenchmarkPersistEpochs(b *testing.B) {
	for _, retained := range []int{0, 100} {
		b.Run(fmt.Sprintf("retained=%d", retained), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: b.TempDir()}
			tbl, err := memsink.New(mem, info, memsink.Options{Persist: true, Writer: &checkpoint.Writer{}, MaxEpochs: retained, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			// The epochs' records are built first: the benchmark measures
			// the sink, not the test's row builder.
			recs := make([][]arrow.Record, b.N)
			for e := range recs {
				recs[e] = vt.BuildRecords(mem, kv, epochRows(int64(e), 10), vt.Shape{})
			}
			ctx := context.Background()
			var ru0 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			b.ResetTimer()
			for e := range recs {
				s, err := vector.NewScan(kv, recs[e]...)
				if err != nil {
					b.Fatal(err)
				}
				if err := tbl.AddBatch(ctx, int64(e), s); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			cpu := ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/epoch")
			b.ReportMetric(float64(ru.Stime.Nano()-ru0.Stime.Nano())/float64(b.N), "sys-ns/epoch")
			for _, rs := range recs {
				for _, r := range rs {
					r.Release()
				}
			}
		})
	}
}
