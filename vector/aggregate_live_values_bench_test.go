package vector_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// BenchmarkLiveValueRows is an Update-mode epoch's changelog of Nexmark
// q17's shape (BenchmarkLiveFinal's aggregation: 6K changed groups, in id
// order as the changelog takes them, of 12K): the changed groups' value
// rows written from the accumulators (encodevalues) or their state
// columns gathered (Values) and encoded by a value encoder
// (values+encode, the path before LiveAggregate.EncodeValues).
//
//	go test -run '^$' -bench 'BenchmarkLiveValueRows' -benchmem ./vector/
func BenchmarkLiveValueRows(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	aggs := []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggSum, "s1", "v"), call(vector.AggSum, "s2", "v"), call(vector.AggSum, "s3", "v"),
		call(vector.AggMin, "lo", "v"), call(vector.AggMax, "hi", "v"),
		call(vector.AggAvg, "mean", "v"), call(vector.AggSum, "total", "v"),
	}
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("s"), "s")}, Aggregates: aggs}
	const groups, changed = 12_000, 6_000
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []vt.Row
	for i := range 4 * groups {
		g := i % groups
		rows = append(rows, vt.Row{int64(g / 4), []string{"a", "b", "c", "d"}[g%4], rng.Int64N(1_000_000), 0.0})
	}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		b.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 2, aggs)
	if err != nil {
		b.Fatal(err)
	}
	defer live.Close()
	t := &testing.T{}
	for _, rec := range partialOf(t, mem, spec, rows) {
		if _, err := live.Merge(ctx, rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	gids := make([]int32, 0, changed)
	for _, g := range rng.Perm(live.NumGroups())[:changed] {
		gids = append(gids, int32(g))
	}
	slices.Sort(gids)
	var types []arrow.DataType
	for _, f := range partial.Fields()[2:] {
		types = append(types, f.Type)
	}
	enc, err := vector.NewValueEncoder(mem, types)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encodevalues", func(b *testing.B) {
		var out vector.GroupValues
		cpu := processCPU()
		for b.Loop() {
			if ok, err := live.EncodeValues(enc, gids, &out); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*changed), "cpu-ns/group")
	})
	b.Run("values+encode", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			vals, err := live.Values(gids)
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(vals); err != nil {
				b.Fatal(err)
			}
			for _, a := range vals {
				a.Release()
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*changed), "cpu-ns/group")
	})
}
