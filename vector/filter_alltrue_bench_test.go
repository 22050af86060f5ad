package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkFilterAllTrue is q7's inferred `price IS NOT NULL` over one
// epoch's bids (10K rows, no nulls): every row passes.
func BenchmarkFilterAllTrue(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "price", Type: vector.Int64, Nullable: true}}, nil)
	bld := array.NewInt64Builder(mem)
	for i := 0; i < 10000; i++ {
		bld.Append(int64(i))
	}
	col := bld.NewArray()
	bld.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, 10000)
	col.Release()
	defer rec.Release()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		scan, err := vector.NewScan(schema, rec)
		if err != nil {
			b.Fatal(err)
		}
		f, err := vector.NewFilter(mem, scan, vector.IsNotNull(vector.Col("price")))
		if err != nil {
			b.Fatal(err)
		}
		out, err := f.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
		f.Close()
	}
}
