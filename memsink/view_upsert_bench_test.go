package memsink_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// q17Schema is the shape of Nexmark q17's result: a running aggregation
// per (auction, day) upserted into a view.
var q17Schema = arrow.NewSchema([]arrow.Field{
	{Name: "auction", Type: vector.Int64},
	{Name: "day", Type: vector.Timestamp},
	{Name: "total", Type: vector.Int64},
	{Name: "sum", Type: vector.Int64},
}, nil)

// BenchmarkViewUpsert commits epochs of changed keys into a view of
// 100K keys, q17's shape: each epoch updates `changed` keys, mostly
// existing ones (a few new), the view's index being a composite of two
// fixed-width columns (words), one bigint (fixed) or a string (bytes). It
// reports ns per changed row: the upsert should cost O(changed rows),
// whatever the view's size.
func BenchmarkViewUpsert(b *testing.B) {
	const keys = 100_000
	for _, layout := range []string{"words", "fixed"} {
		for _, changed := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/changed=%d", layout, changed), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				schema := q17Schema
				keyCols := []string{"auction", "day"}
				if layout == "fixed" {
					keyCols = []string{"auction"}
				}
				info := arrowstream.SinkInfo{QueryName: "bench", Schema: schema, Mode: arrowstream.Update, KeyColumns: keyCols}
				tbl, err := memsink.New(mem, info, memsink.Options{UpdateAsView: true, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer tbl.Close()
				ctx := context.Background()
				// The initial view: every key once.
				for e, off := 0, 0; off < keys; e, off = e+1, off+memsink.MaxRecordRows {
					rec := q17Record(mem, off, min(memsink.MaxRecordRows, keys-off), 1, keys)
					err := tbl.AddBatch(ctx, int64(e), q17Scan(b, rec))
					rec.Release()
					if err != nil {
						b.Fatal(err)
					}
				}
				// Pre-built epochs walking over the keys with a stride, so
				// updates land in every chunk.
				epochs := make([]arrow.Record, 8)
				for i := range epochs {
					epochs[i] = q17Record(mem, i*7919, changed, 7919, keys+keys/100)
					defer epochs[i].Release()
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := tbl.AddBatch(ctx, int64(100+i), q17Scan(b, epochs[i%len(epochs)])); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*changed), "ns/row")
			})
		}
	}
}

// q17Record builds n rows whose auction ids walk from start by stride
// modulo mod (a day per 1000 auctions).
func q17Record(mem memory.Allocator, start, n, stride, mod int) arrow.Record {
	ab, db := array.NewInt64Builder(mem), array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
	tb, sb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	defer ab.Release()
	defer db.Release()
	defer tb.Release()
	defer sb.Release()
	for i := range n {
		a := int64((start + i*stride) % mod)
		ab.Append(a)
		db.Append(arrow.Timestamp(a / 1000 * 86_400_000_000))
		tb.Append(int64(i))
		sb.Append(a * 3)
	}
	cols := []arrow.Array{ab.NewArray(), db.NewArray(), tb.NewArray(), sb.NewArray()}
	rec := array.NewRecord(q17Schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func q17Scan(b testing.TB, rec arrow.Record) vector.Operator {
	s, err := vector.NewScan(q17Schema, rec)
	if err != nil {
		b.Fatal(err)
	}
	return s
}
