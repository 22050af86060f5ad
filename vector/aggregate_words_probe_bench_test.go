package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWindowKeyProbeLive probes epochs of 64K rows keyed by (window
// struct, bigint key) — 10K keys, a new 10 s window every epoch — into a
// words grouper kept across epochs, as a streaming aggregation's live
// state is: the table holds the earlier epochs' groups, so most rows find
// theirs and each epoch adds the next window's. Every 4 epochs the groups
// of closed windows are dropped in place (keepGroups), as Compact does.
// Compare before/after across commits in one run:
//
//	go test -run '^$' -bench 'BenchmarkWindowKeyProbeLive' ./vector/
func BenchmarkWindowKeyProbeLive(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n, keys, epochs = 64 << 10, 10_000, 16
	batches := make([][]arrow.Array, epochs)
	for e := range epochs {
		sb := array.NewStructBuilder(mem, windowKeyType)
		st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
		kb := array.NewInt64Builder(mem)
		x := uint64(e + 1)
		for i := range n {
			// two windows per epoch: the current one and a late straggler
			w := int64(e)
			if i%8 == 0 && e > 0 {
				w--
			}
			s := arrow.Timestamp(w * 10_000_000)
			sb.Append(true)
			st.Append(s)
			en.Append(s + 10_000_000)
			x = x*6364136223846793005 + 1442695040888963407
			kb.Append(int64(x>>33) % keys)
		}
		batches[e] = []arrow.Array{sb.NewArray(), kb.NewArray()}
		sb.Release()
		kb.Release()
	}
	defer func() {
		for _, c := range batches {
			releaseArrays(c)
		}
	}()
	types := []arrow.DataType{batches[0][0].DataType(), batches[0][1].DataType()}
	gids := make([]int32, n)
	cpu0 := cpuNanos()
	for b.Loop() {
		g := newWordsGrouper(types)
		for e, cols := range batches {
			if err := g.group(cols, gids); err != nil {
				b.Fatal(err)
			}
			if e%4 == 3 { // keep the last two windows' groups
				var live []int32
				for gid := range g.numGroups() {
					if int64(g.word(gid, 0)) >= int64(e-1)*10_000_000 {
						live = append(live, int32(gid))
					}
				}
				g.keepGroups(live)
			}
		}
	}
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(n*epochs*b.N), "cpu-ns/row")
	b.ReportMetric(float64(n*epochs)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
