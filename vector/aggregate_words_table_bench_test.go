package vector

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWordsTable measures the words grouper's slot table on a key of
// two bigint columns (q17's auction and day) over 1K, 64K and 1M groups
// (a table just under half full):
// hit probes batches of 64K rows whose keys are all in the table (random
// order: the generic path, no runs), build groups every key once into a
// fresh grouper, 64K rows a batch, so it pays for the misses, the
// additions and every growth of the table from its first 64 slots.
// Compare the slot layouts across commits in one run:
//
//	go test -run '^$' -bench 'BenchmarkWordsTable' ./vector/
func BenchmarkWordsTable(b *testing.B) {
	mem := memory.NewGoAllocator()
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	const batch = 64 << 10
	for _, groups := range []int{1_000, 64_000, 1_000_000} {
		rng := rand.New(rand.NewPCG(uint64(groups), 29))
		ka, kb := make([]int64, groups), make([]int64, groups)
		for i := range groups {
			ka[i], kb[i] = rng.Int64N(1<<40), rng.Int64N(1<<20)
		}
		// build: every key once, in batches; hit: random keys of the table.
		var build, hit [][]arrow.Array
		mk := func(idx func(i int) int, n int) []arrow.Array {
			a, c := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
			defer a.Release()
			defer c.Release()
			for i := range n {
				j := idx(i)
				a.Append(ka[j])
				c.Append(kb[j])
			}
			return []arrow.Array{a.NewArray(), c.NewArray()}
		}
		for lo := 0; lo < groups; lo += batch {
			build = append(build, mk(func(i int) int { return lo + i }, min(batch, groups-lo)))
		}
		for range 4 {
			hit = append(hit, mk(func(int) int { return rng.IntN(groups) }, batch))
		}
		gids := make([]int32, batch)
		name := map[int]string{1_000: "1K", 64_000: "64K", 1_000_000: "1M"}[groups]
		// built groups every key of the table from empty.
		built := func(b *testing.B) *wordsGrouper {
			g := newWordsGrouper(types)
			for _, cols := range build {
				if err := g.group(cols, gids[:cols[0].Len()]); err != nil {
					b.Fatal(err)
				}
			}
			if g.numGroups() != groups {
				b.Fatalf("%d groups, want %d", g.numGroups(), groups)
			}
			return g
		}
		b.Run("hit/"+name, func(b *testing.B) {
			g := built(b)
			if err := g.group(hit[0], gids); err != nil { // no growth timed
				b.Fatal(err)
			}
			i := 0
			cpu0 := cpuNanos()
			for b.Loop() {
				if err := g.group(hit[i%len(hit)], gids); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(batch*b.N), "cpu-ns/row")
		})
		b.Run("build/"+name, func(b *testing.B) {
			cpu0 := cpuNanos()
			for b.Loop() {
				built(b)
			}
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(groups*b.N), "cpu-ns/row")
		})
		for _, c := range append(build, hit...) {
			releaseArrays(c)
		}
	}
}
