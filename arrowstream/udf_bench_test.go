package arrowstream

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkUserFunction compares a user function, len(x) + n over whole
// columns, with the same computation by built-ins (length(x) + n), over
// 1M rows in 64K-row batches: the cost of the user-function path (its
// argument casts and the checks of what it returns) next to the engine's
// own kernels.
func BenchmarkUserFunction(b *testing.B) {
	s := NewSession(SessionOptions{Allocator: memory.NewGoAllocator()})
	var calls, rows atomic.Int64
	if err := s.RegisterFunction(plusLen("plus_len", true, &calls, &rows)); err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.String}, {Name: "n", Type: vector.Int64}}, nil)
	var recs []arrow.Record
	for r := 0; r < 16; r++ {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := 0; i < 1<<16; i++ {
			rb.Field(0).(*array.StringBuilder).Append(strconv.Itoa(i * 7919))
			rb.Field(1).(*array.Int64Builder).Append(int64(i))
		}
		recs = append(recs, rb.NewRecord())
		rb.Release()
	}
	if err := s.RegisterTable("bench", schema, recs...); err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	defer s.DropTable("bench")
	for _, c := range []struct{ name, query string }{
		{"builtin", "SELECT sum(length(x) + n) FROM bench"},
		{"udf", "SELECT sum(plus_len(x, n)) FROM bench"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := s.SQL(context.Background(), c.query)
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), res.Op)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range out {
					r.Release()
				}
				res.Close()
			}
		})
	}
}
