package memsink_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// The engine benchmarks run whole streaming queries into the memory sink:
// a memory source feeding one block per epoch, so that every epoch pays the
// full cost of the loop (offset-log write, reading, executing, sink commit,
// state commit, commit-log write, progress). "fsync" makes every checkpoint
// file durable (the default); "nosync" writes the same files without fsync,
// which shows what durability costs on this machine.

var durabilities = []struct {
	name   string
	noSync bool
}{{"checkpoint=fsync", false}, {"checkpoint=nosync", true}}

func benchSession(b *testing.B, noSync bool) *arrowstream.Session {
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	b.Cleanup(pool.Close)
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: pool, CheckpointRoot: b.TempDir(), NoSync: noSync,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	memsink.Install(s, memsink.NewCatalog(), memsink.Options{MaxEpochs: 4})
	return s
}

// BenchmarkEmptyEpoch measures the fixed cost of one epoch with no rows
// (ns/op is per epoch).
func BenchmarkEmptyEpoch(b *testing.B) {
	for _, d := range durabilities {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			s := benchSession(b, d.noSync)
			schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
			src := arrowstream.NewMemoryStream(s.Allocator(), schema)
			defer src.Close()
			src.SetMaxOffsetsPerTrigger(1)
			s.RegisterStream("input", src)
			for i := 0; i < b.N; i++ {
				src.AddData()
			}
			b.ResetTimer()
			q, err := s.ReadStream("input").WriteStream().Format("memory").QueryName("empty").Start(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := q.ProcessAllAvailable(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if p := q.LastProgress(); p == nil || p.BatchID != int64(b.N-1) {
				b.Fatalf("ran %v epochs, want %d", p, b.N)
			}
			q.Stop()
		})
	}
}

// BenchmarkFilterRunningCount streams 64K-row blocks of random keys through
// WHERE value % 2 = 0 GROUP BY value count(*) (Update mode, 10K keys) into
// the memory sink, one block per epoch; it reports input rows per second.
func BenchmarkFilterRunningCount(b *testing.B) {
	const rows = 64 << 10
	for _, d := range durabilities {
		b.Run(d.name, func(b *testing.B) {
			ctx := context.Background()
			s := benchSession(b, d.noSync)
			schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
			src := arrowstream.NewMemoryStream(s.Allocator(), schema)
			defer src.Close()
			src.SetMaxOffsetsPerTrigger(1)
			s.RegisterStream("input", src)
			r := rand.New(rand.NewSource(1))
			vals := make([]int64, rows)
			for i := 0; i < b.N; i++ {
				for j := range vals {
					vals[j] = r.Int63n(20_000)
				}
				bld := array.NewInt64Builder(s.Allocator())
				bld.AppendValues(vals, nil)
				col := bld.NewArray()
				bld.Release()
				rec := array.NewRecord(schema, []arrow.Array{col}, rows)
				col.Release()
				src.AddRecord(rec)
				rec.Release()
			}
			b.ResetTimer()
			q, err := s.ReadStream("input").Filter("value % 2 = 0").GroupBy("value").Agg("count(*) AS n").
				WriteStream().Format("memory").QueryName("counts").OutputMode(arrowstream.Update).Start(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := q.ProcessAllAvailable(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			q.Stop()
		})
	}
}
