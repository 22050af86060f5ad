package memsink_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "x", Type: vector.Float64},
	{Name: "s", Type: vector.String},
}, nil)

// benchRecord builds a MaxRecordRows-row record with keys offset+i.
func benchRecord(mem memory.Allocator, offset int64) arrow.Record {
	n := memsink.MaxRecordRows
	kb, xb, sb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem), array.NewStringBuilder(mem)
	defer kb.Release()
	defer xb.Release()
	defer sb.Release()
	for i := 0; i < n; i++ {
		kb.Append((offset + int64(i)) % (4 * int64(n)))
		xb.Append(float64(i) / 3)
		sb.Append(fmt.Sprintf("campaign-%04d", i%5000))
	}
	cols := []arrow.Array{kb.NewArray(), xb.NewArray(), sb.NewArray()}
	rec := array.NewRecord(benchSchema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func scanOf(b testing.TB, rec arrow.Record) vector.Operator {
	s, err := vector.NewScan(benchSchema, rec)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkAddBatch commits one 64K-row epoch per iteration. The records
// are retained, not copied, so Append and Complete cost little; a view
// indexes every key; persisting adds zstd IPC encoding (without fsync).
func BenchmarkAddBatch(b *testing.B) {
	cases := []struct {
		name string
		info arrowstream.SinkInfo
		opts memsink.Options
	}{
		{"append", arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{MaxEpochs: 16}},
		{"complete", arrowstream.SinkInfo{Mode: arrowstream.Complete}, memsink.Options{}},
		{"view", arrowstream.SinkInfo{Mode: arrowstream.Update, KeyColumns: []string{"k"}}, memsink.Options{UpdateAsView: true}},
		{"append-persist", arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{MaxEpochs: 16, Persist: true, Writer: &checkpoint.Writer{NoSync: true}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			recs := make([]arrow.Record, 4)
			for i := range recs {
				recs[i] = benchRecord(mem, int64(i)*40_000)
				defer recs[i].Release()
			}
			info := c.info
			info.QueryName, info.Schema, info.CheckpointDir = "bench", benchSchema, b.TempDir()
			c.opts.Logger = quiet
			tbl, err := memsink.New(mem, info, c.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := tbl.AddBatch(ctx, int64(i), scanOf(b, recs[i%len(recs)])); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(memsink.MaxRecordRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkSnapshot measures Snapshot()+Release() with an idle table and
// while a writer commits 64K-row epochs as fast as it can (with eviction),
// in the same run: readers are not blocked by writers. It reports the
// median, p99 and max latency of single calls.
func BenchmarkSnapshot(b *testing.B) {
	for _, mode := range []string{"idle", "writing"} {
		b.Run(mode, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rec := benchRecord(mem, 0)
			defer rec.Release()
			info := arrowstream.SinkInfo{QueryName: "bench", Schema: benchSchema, Mode: arrowstream.Append}
			tbl, err := memsink.New(mem, info, memsink.Options{MaxEpochs: 64})
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			ctx := context.Background()
			for e := int64(0); e < 64; e++ {
				if err := tbl.AddBatch(ctx, e, scanOf(b, rec)); err != nil {
					b.Fatal(err)
				}
			}
			var stop atomic.Bool
			var commits atomic.Int64
			var wg sync.WaitGroup
			if mode == "writing" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for e := int64(64); !stop.Load(); e++ {
						if err := tbl.AddBatch(ctx, e, scanOf(b, rec)); err != nil {
							b.Error(err)
							return
						}
						commits.Add(1)
					}
				}()
				for commits.Load() < 2 {
					time.Sleep(time.Millisecond)
				}
			}
			lat := make([]time.Duration, 0, min(b.N, 1<<20))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				s := tbl.Snapshot()
				s.Release()
				if len(lat) < cap(lat) {
					lat = append(lat, time.Since(t0))
				}
			}
			b.StopTimer()
			stop.Store(true)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max-ns")
			b.ReportMetric(float64(commits.Load())/b.Elapsed().Seconds(), "commits/s")
		})
	}
}
