package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWindowKeyGrouping groups 64K rows by (window struct, bigint
// key) — a windowed aggregation's key, 10K keys over two windows —
// through the words grouper and through the general key-bytes grouper it
// replaces for such keys, in the same run: a fresh grouper per epoch, as
// an epoch's partial aggregation has.
//
//	go test -run '^$' -bench 'BenchmarkWindowKeyGrouping' ./vector/
func BenchmarkWindowKeyGrouping(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n, keys = 64 << 10, 10_000
	rng := rand.New(rand.NewPCG(1, 2))
	sb := array.NewStructBuilder(mem, windowKeyType)
	st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
	kb := array.NewInt64Builder(mem)
	for i := range n {
		s := arrow.Timestamp(i * 2 / n * 10_000_000)
		sb.Append(true)
		st.Append(s)
		en.Append(s + 10_000_000)
		kb.Append(int64(rng.IntN(keys)))
	}
	cols := []arrow.Array{sb.NewArray(), kb.NewArray()}
	sb.Release()
	kb.Release()
	defer releaseArrays(cols)
	types := []arrow.DataType{cols[0].DataType(), cols[1].DataType()}
	gids := make([]int32, n)
	for _, path := range []string{"words", "bytes"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				var g grouper
				if path == "words" {
					g = newWordsGrouper(types)
				} else {
					enc, err := NewKeyEncoder(mem, types)
					if err != nil {
						b.Fatal(err)
					}
					g = &bytesGrouper{t: newBytesTable(), enc: enc}
				}
				if err := g.group(cols, gids); err != nil {
					b.Fatal(err)
				}
				if g.numGroups() < keys {
					b.Fatal(fmt.Sprintf("%d groups", g.numGroups()))
				}
				g.release()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
