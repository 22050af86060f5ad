package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWordsKeepGroups is a windowed aggregation's compaction as the
// grouper sees it: a table of two windows' groups (10K keys each, 20K
// groups in 64K slots) drops the older window's (keepGroups) and the next
// window's keys are grouped in. It reports CPU ns per dropped group of
// the keepGroups calls alone. (Tried and dropped: renumbering the slots in
// place, dropped groups removed by backward-shift deletion in one walk of
// the slots, at 62-71 against 20-31 CPU ns per dropped group for the
// rehash: walking all 64K slots costs more than placing 10K groups again.)
//
//	go test -run '^$' -bench WordsKeepGroups ./vector/
func BenchmarkWordsKeepGroups(b *testing.B) {
	mem := memory.NewGoAllocator()
	const keys, windows = 10_000, 8
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	batches := make([][]arrow.Array, windows)
	x := uint64(1)
	for w := range windows {
		wb, kb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
		for range keys {
			x = x*6364136223846793005 + 1442695040888963407
			wb.Append(int64(w) * 10_000_000)
			kb.Append(int64(x >> 20))
		}
		batches[w] = []arrow.Array{wb.NewArray(), kb.NewArray()}
		wb.Release()
		kb.Release()
	}
	defer func() {
		for _, c := range batches {
			releaseArrays(c)
		}
	}()
	gids := make([]int32, keys)
	live := make([]int32, keys)
	for i := range live {
		live[i] = int32(keys + i)
	}
	var cpu, dropped int64
	for b.Loop() {
		g := newWordsGrouper(types)
		g.noRows = true
		for w, cols := range batches {
			if err := g.group(cols, gids); err != nil {
				b.Fatal(err)
			}
			if w == 0 {
				continue
			}
			c0 := cpuNanos()
			g.keepGroups(live)
			cpu += cpuNanos() - c0
			dropped += keys
		}
		g.release()
	}
	b.ReportMetric(float64(cpu)/float64(dropped), "cpu-ns/group")
}
