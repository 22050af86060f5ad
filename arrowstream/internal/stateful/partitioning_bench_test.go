package stateful

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkPartitioning encodes a 64k-row batch of keys and assigns every
// row its partition among 200, under the key-encoder scheme and Spark's
// Murmur3 one alternately in each iteration (same machine load), for an
// int64 key and a string key. It reports ns per row of both and the
// murmur3/keyEncoder ratio (encoding included, as in splitByPartition).
//
//	go test -run '^$' -bench BenchmarkPartitioning ./arrowstream/internal/stateful/
func BenchmarkPartitioning(b *testing.B) {
	const rows = 1 << 16
	mem := memory.NewGoAllocator()
	for _, dt := range []arrow.DataType{vector.Int64, vector.String} {
		b.Run(vector.TypeName(dt), func(b *testing.B) {
			bld := array.NewBuilder(mem, dt)
			for i := 0; i < rows; i++ {
				switch x := bld.(type) {
				case *array.Int64Builder:
					x.Append(int64(i * 7919))
				case *array.StringBuilder:
					x.Append(fmt.Sprintf("user-%d", i*7919))
				}
			}
			col := bld.NewArray()
			bld.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}}, nil)
			rec := array.NewRecord(schema, []arrow.Array{col}, rows)
			col.Release()
			defer rec.Release()
			codec, err := newRowCodec(mem, schema, []int{0})
			if err != nil {
				b.Fatal(err)
			}
			var times [2]time.Duration
			sink := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for s, scheme := range []partitioning{partitionKeyEncoder, partitionMurmur3} {
					t0 := time.Now()
					if err := codec.encode(rec); err != nil {
						b.Fatal(err)
					}
					for r := 0; r < rows; r++ {
						sink += scheme.of(codec, r, 200)
					}
					times[s] += time.Since(t0)
				}
			}
			n := float64(rows) * float64(b.N)
			b.ReportMetric(float64(times[0].Nanoseconds())/n, "keyEncoder-ns/row")
			b.ReportMetric(float64(times[1].Nanoseconds())/n, "murmur3-ns/row")
			b.ReportMetric(times[1].Seconds()/times[0].Seconds(), "murmur3/keyEncoder")
			if sink < 0 {
				b.Fatal(sink)
			}
		})
	}
}
