package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWordsGrouperRuns groups 10K-row batches by window (q7: two
// windows a batch) and by window and key (windowed, q5: a key a row,
// where the run path gives up after its prefix), with the run path and
// without (generic).
func BenchmarkWordsGrouperRuns(b *testing.B) {
	const n = 10_000
	mem := memory.NewGoAllocator()
	sb := array.NewStructBuilder(mem, windowKeyType)
	st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
	kb := array.NewInt64Builder(mem)
	for i := range n {
		s := arrow.Timestamp(i / (n / 2) * 10_000_000)
		sb.Append(true)
		st.Append(s)
		en.Append(s + 10_000_000)
		kb.Append(int64(i*7919) % 1000)
	}
	win, key := sb.NewArray(), kb.NewArray()
	defer win.Release()
	defer key.Release()
	for _, shape := range []struct {
		name string
		keys []arrow.Array
	}{{"window", []arrow.Array{win}}, {"window-key", []arrow.Array{win, key}}} {
		for _, noRuns := range []bool{false, true} {
			name := shape.name + "-runs"
			if noRuns {
				name = shape.name + "-generic"
			}
			b.Run(name, func(b *testing.B) {
				types := make([]arrow.DataType, len(shape.keys))
				for i, c := range shape.keys {
					types[i] = c.DataType()
				}
				g := newWordsGrouper(types)
				g.noRows, g.noRuns = true, noRuns
				gids := make([]int32, n)
				b.ReportAllocs()
				for b.Loop() {
					if err := g.group(shape.keys, gids); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}
