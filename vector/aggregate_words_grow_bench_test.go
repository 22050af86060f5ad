package vector

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWordsGrow groups distinct (window struct, bigint key) keys
// into an empty words grouper, 8K rows a batch, until it holds the given
// number of groups: the table doubles from 64 slots about log2(groups/32)
// times, as a streaming aggregation's live state does after a start and
// as a scratch aggregation does when it fills further than before. The
// figure is CPU per group added (probe, insert and growth). Compare
// before/after across commits in one run:
//
//	go test -run '^$' -bench 'BenchmarkWordsGrow' ./vector/
func BenchmarkWordsGrow(b *testing.B) {
	for _, groups := range []int{16 << 10, 128 << 10, 1 << 20} {
		b.Run(fmt.Sprint(groups), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			const batch = 8 << 10
			var batches [][]arrow.Array
			x := uint64(7)
			for lo := 0; lo < groups; lo += batch {
				sb := array.NewStructBuilder(mem, windowKeyType)
				st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
				kb := array.NewInt64Builder(mem)
				for i := lo; i < min(lo+batch, groups); i++ {
					// 16 windows, keys spread: every row a new group
					s := arrow.Timestamp(int64(i%16) * 2_000_000)
					sb.Append(true)
					st.Append(s)
					en.Append(s + 10_000_000)
					x = x*6364136223846793005 + 1442695040888963407
					kb.Append(int64(x>>40)<<20 | int64(i/16))
				}
				batches = append(batches, []arrow.Array{sb.NewArray(), kb.NewArray()})
				sb.Release()
				kb.Release()
			}
			defer func() {
				for _, c := range batches {
					releaseArrays(c)
				}
			}()
			types := []arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int64}
			gids := make([]int32, batch)
			ctx := context.Background()
			cpu0 := cpuNanos()
			for b.Loop() {
				g := newWordsGrouper(types)
				for _, cols := range batches {
					if err := g.groupContext(ctx, cols, gids[:cols[1].Len()]); err != nil {
						b.Fatal(err)
					}
				}
				if g.numGroups() != groups {
					b.Fatalf("%d groups, want %d", g.numGroups(), groups)
				}
			}
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(groups*b.N), "cpu-ns/group")
		})
	}
}
