package memsink_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkStatefulEpoch runs a streaming count per key over 200 shuffle
// partitions, one block per epoch, with fsync on: "empty" epochs read no
// rows (the state changes nowhere), "3rows" epochs read three rows of
// three keys (the state changes in at most three partitions), "1krows"
// epochs a thousand rows of a thousand keys (most partitions change). ns/op is
// per epoch. Under strace -f -c, the difference between two -benchtime
// counts gives the system calls of one epoch (what group commit of state
// saves: partitions that did not change write nothing, the changed ones
// are synced together). checkpoint=nosync shows the loop's fixed cost per
// epoch without the disk; cpu-ns/op is the process's CPU time per epoch
// (user and system, every goroutine: background maintenance included).
func BenchmarkStatefulEpoch(b *testing.B) {
	for _, rows := range []int{0, 3, 1000} {
		name := "empty"
		switch rows {
		case 3:
			name = "3rows"
		case 1000:
			name = "1krows"
		}
		for _, d := range durabilities {
			if !d.noSync {
				statefulEpoch(b, name, rows, false)
				continue
			}
			statefulEpoch(b, name+"/"+d.name, rows, true)
		}
	}
}

func statefulEpoch(b *testing.B, name string, rows int, noSync bool) {
	{
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
			b.Cleanup(pool.Close)
			s := arrowstream.NewSession(arrowstream.SessionOptions{
				Allocator: pool, CheckpointRoot: b.TempDir(), NoSync: noSync,
				Conf: map[string]string{arrowstream.ConfShufflePartitions: "200"},
			})
			memsink.Install(s, memsink.NewCatalog(), memsink.Options{MaxEpochs: 4})
			schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
			src := arrowstream.NewMemoryStream(s.Allocator(), schema)
			defer src.Close()
			src.SetMaxOffsetsPerTrigger(1)
			s.RegisterStream("input", src)
			add := func(vals []int64) {
				bld := array.NewInt64Builder(s.Allocator())
				bld.AppendValues(vals, nil)
				col := bld.NewArray()
				bld.Release()
				rec := array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
				col.Release()
				src.AddRecord(rec)
				rec.Release()
			}
			// The first epoch fills every partition's state; it runs
			// before the timer (creating 200 partition directories and
			// snapshotting them is a start-up cost, not an epoch's).
			first := make([]int64, 2000)
			for i := range first {
				first[i] = int64(i)
			}
			add(first)
			q, err := s.ReadStream("input").GroupBy("value").Agg("count(*) AS n").
				WriteStream().Format("memory").QueryName("counts").OutputMode(arrowstream.Update).Start(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := q.ProcessAllAvailable(ctx); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				vals := make([]int64, rows)
				for j := range vals {
					vals[j] = int64(j*7 + i)
				}
				add(vals)
			}
			b.ResetTimer()
			span := harness.StartSpan()
			if err := q.ProcessAllAvailable(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			// CPU per epoch: on a shared machine wall time per epoch
			// says more about the load than about the loop.
			_, cpu := span.Stop()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			if p := q.LastProgress(); p == nil || p.BatchID != int64(b.N) {
				b.Fatalf("ran %v epochs, want %d", p, b.N+1)
			}
			q.Stop()
		})
	}
}
