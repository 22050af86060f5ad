package vector

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkGroupKeys encodes the store keys and Spark hashes of 10K
// groups keyed by (window, bigint), as a windowed aggregation does for the
// groups new in an epoch: "words" from the grouper's words (encodeKeys),
// "columns" by rebuilding the key columns and encoding and hashing them.
//
//	go test -run '^$' -bench 'BenchmarkGroupKeys' ./vector/
func BenchmarkGroupKeys(b *testing.B) {
	mem := memory.NewGoAllocator()
	types := []arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int64}
	g := newWordsGrouper(types)
	rng := rand.New(rand.NewPCG(1, 2))
	cols := randomKeyCols(mem, rng, types, 1<<16, 0, false)
	defer releaseArrays(cols)
	if err := g.group(cols, make([]int32, 1<<16)); err != nil {
		b.Fatal(err)
	}
	gids := make([]int32, 10_000)
	for i := range gids {
		gids[i] = int32(rng.IntN(g.numGroups()))
	}
	enc, err := NewKeyEncoder(mem, types)
	if err != nil {
		b.Fatal(err)
	}
	defer enc.Release()
	all := []int{0, 1}
	b.Run("words", func(b *testing.B) {
		var out GroupKeys
		cpu0 := cpuNanos()
		for b.Loop() {
			g.encodeKeys(gids, all, &out)
		}
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N*len(gids)), "cpu-ns/key")
	})
	b.Run("words-nohash", func(b *testing.B) { // GroupKeys.NoHashes: Spark's hash alone
		out := GroupKeys{NoHashes: true}
		cpu0 := cpuNanos()
		for b.Loop() {
			g.encodeKeys(gids, all, &out)
		}
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N*len(gids)), "cpu-ns/key")
	})
	b.Run("columns", func(b *testing.B) {
		spark := make([]int32, len(gids))
		cpu0 := cpuNanos()
		for b.Loop() {
			keys, err := g.keysOf(mem, gids)
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(keys); err != nil {
				b.Fatal(err)
			}
			if err := HashRows(keys, spark); err != nil {
				b.Fatal(err)
			}
			releaseArrays(keys)
		}
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N*len(gids)), "cpu-ns/key")
	})
}
