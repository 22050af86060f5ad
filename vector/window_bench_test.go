package vector_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkWindowAssign assigns 64K-row batches of (timestamp, bigint) to
// 10 s tumbling windows and to 10 s windows sliding by 5 s and by 3 s
// (2, 2 and 3-4 output rows per input row), and reports input rows/s.
func BenchmarkWindowAssign(b *testing.B) {
	for _, a := range opsAllocators() {
		b.Run(a.name, func(b *testing.B) { benchWindowAssign(b, a.mem) })
	}
}

func benchWindowAssign(b *testing.B, mem memory.Allocator) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "t", Type: vector.Timestamp, Nullable: true},
		{Name: "x", Type: vector.Int64, Nullable: true},
	}, nil)
	r := rand.New(rand.NewSource(1))
	tb := array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
	xb := array.NewInt64Builder(mem)
	for i := 0; i < opsBatchRows; i++ {
		tb.Append(arrow.Timestamp(1_700_000_000_000_000 + r.Int63n(3_600_000_000) - 1_800_000_000))
		xb.Append(int64(i))
	}
	cols := []arrow.Array{tb.NewArray(), xb.NewArray()}
	tb.Release()
	xb.Release()
	rec := array.NewRecord(schema, cols, opsBatchRows)
	cols[0].Release()
	cols[1].Release()
	defer rec.Release()
	for _, c := range []struct{ width, slide int64 }{{10 * opsSec, 10 * opsSec}, {10 * opsSec, 5 * opsSec}, {10 * opsSec, 3 * opsSec}} {
		b.Run(fmt.Sprintf("width=%ds/slide=%ds", c.width/opsSec, c.slide/opsSec), func(b *testing.B) {
			w, err := vector.NewWindowAssign(mem, &opsRepeat{rec: rec, left: b.N}, vector.Col("t"), c.width, c.slide, 0, "window")
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			out := opsDrain(b, w)
			b.StopTimer()
			w.Close()
			b.ReportMetric(float64(opsBatchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(out)/float64(opsBatchRows)/float64(b.N), "out/in")
		})
	}
	// Times in order (a stream's batch, Nexmark's bids): the tumbling path
	// takes the rows by runs of one window.
	b.Run("width=10s/slide=10s/ordered", func(b *testing.B) {
		sorted := sortedTimes(mem, rec)
		defer sorted.Release()
		w, err := vector.NewWindowAssign(mem, &opsRepeat{rec: sorted, left: b.N}, vector.Col("t"), 10*opsSec, 10*opsSec, 0, "window")
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		opsDrain(b, w)
		b.StopTimer()
		w.Close()
		b.ReportMetric(float64(opsBatchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// sortedTimes is rec (t, x) with its times sorted.
func sortedTimes(mem memory.Allocator, rec arrow.Record) arrow.Record {
	ts := slices.Clone(rec.Column(0).(*array.Timestamp).TimestampValues())
	slices.Sort(ts)
	tb := array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
	defer tb.Release()
	tb.AppendValues(ts, nil)
	cols := []arrow.Array{tb.NewArray(), rec.Column(1)}
	defer cols[0].Release()
	return array.NewRecord(rec.Schema(), cols, rec.NumRows())
}
