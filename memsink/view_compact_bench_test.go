package memsink_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// BenchmarkViewCompaction runs a view the way Nexmark q17 does: small
// epochs (a few hundred changed keys each, some new) over a key set that
// keeps growing, so that the view's chunks stay small and compaction
// merges them every few epochs. One iteration is a fresh view fed 200
// epochs; the figure is ns per changed row, compaction included (what a
// whole run pays, not one epoch of it).
func BenchmarkViewCompaction(b *testing.B) {
	for _, changed := range []int{700, 3000} {
		b.Run(fmt.Sprintf("changed=%d", changed), func(b *testing.B) {
			const epochs = 200
			mem := memory.NewGoAllocator()
			recs := make([]arrow.Record, epochs)
			for e := range recs {
				// The domain grows by a tenth of an epoch per epoch: a
				// tenth of the rows are new keys, the rest updates.
				domain := changed + e*changed/10
				recs[e] = q17Record(mem, e*7919, changed, 7919, domain)
				defer recs[e].Release()
			}
			info := arrowstream.SinkInfo{QueryName: "bench", Schema: q17Schema, Mode: arrowstream.Update, KeyColumns: []string{"auction", "day"}}
			ctx := context.Background()
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				tbl, err := memsink.New(mem, info, memsink.Options{UpdateAsView: true, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				for e, rec := range recs {
					if err := tbl.AddBatch(ctx, int64(e), q17Scan(b, rec)); err != nil {
						b.Fatal(err)
					}
				}
				tbl.Close()
			}
			rows := float64(b.N * epochs * changed)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
			// CPU time is what a loaded machine does not inflate.
			b.ReportMetric(float64(processCPU(b)-cpu0)/rows, "cpu-ns/row")
		})
	}
}

// processCPU is the process's user and system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
