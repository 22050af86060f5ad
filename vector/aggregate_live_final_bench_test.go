package vector_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// BenchmarkLiveFinal is an Update-mode epoch's output of Nexmark q17's
// shape: the final rows of 6K changed groups of a 12K-group live
// aggregation by two bigint keys (count, four sums, min, max, avg of a
// double),
// read straight from the accumulators (final) or by finalizing their
// partial state (state+finalrows, the path before LiveAggregate.Final).
//
//	go test -run '^$' -bench 'BenchmarkLiveFinal' -benchmem ./vector/
func BenchmarkLiveFinal(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	aggs := []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggSum, "s1", "f"), call(vector.AggSum, "s2", "f"), call(vector.AggSum, "s3", "f"),
		call(vector.AggMin, "lo", "f"), call(vector.AggMax, "hi", "f"),
		call(vector.AggAvg, "mean", "f"), call(vector.AggSum, "total", "f"),
	}
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("v"), "v")}, Aggregates: aggs}
	const groups, changed = 12_000, 6_000
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []vt.Row
	for i := range 4 * groups {
		g := i % groups
		rows = append(rows, vt.Row{int64(g / 4), "", int64(g % 4), float64(rng.IntN(1_000_000))})
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
	gids := make([]int32, changed)
	for i := range gids {
		gids[i] = int32(rng.IntN(live.NumGroups()))
	}
	final := partialStateSpecOf(partial, 2, aggs, vector.AggFinal)
	b.Run("final", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			rec, ok, err := live.Final(gids)
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			rec.Release()
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*changed), "cpu-ns/group")
	})
	b.Run("state+finalrows", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			st, err := live.State(gids)
			if err != nil {
				b.Fatal(err)
			}
			rec, ok, err := vector.FinalRows(ctx, mem, st, final)
			st.Release()
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			rec.Release()
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*changed), "cpu-ns/group")
	})
	// values: the changed groups' state columns alone, what the
	// changelog of an Update-mode epoch encodes (LiveAggregate.Values).
	b.Run("values", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			vals, err := live.Values(gids)
			if err != nil {
				b.Fatal(err)
			}
			for _, a := range vals {
				a.Release()
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*changed), "cpu-ns/group")
	})
}
