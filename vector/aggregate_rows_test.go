package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestPartialRowsMergeLikePartial: the final aggregation of PartialRows'
// rows equals the complete aggregation of the input, for random batches
// with nulls, by single and composite keys (first and last included:
// the rows keep input order).
func TestPartialRowsMergeLikePartial(t *testing.T) {
	ctx := context.Background()
	aggs := append(rawAggs(), call(vector.AggFirst, "fv", "v"), call(vector.AggLast, "ls", "s"))
	for _, keys := range [][]string{{"k"}, {"k", "v"}, {"k", "s"}, nil} {
		mem := vt.NewAllocator(t)
		var groupBy []vector.NamedExpr
		for _, k := range keys {
			groupBy = append(groupBy, vector.As(vector.Col(k), k))
		}
		spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs}
		rng := rand.New(rand.NewPCG(5, uint64(len(keys))))
		for step := 0; step < 20; step++ {
			var rows []vt.Row
			for i := 0; i < rng.IntN(80); i++ {
				var k, s, v, f any = int64(rng.IntN(9)), []string{"a", "b"}[rng.IntN(2)], rng.Int64N(100) - 50, float64(rng.IntN(50))
				if rng.IntN(10) == 0 {
					k = nil
				}
				if rng.IntN(5) == 0 {
					v = nil
				}
				if rng.IntN(5) == 0 {
					f = nil
				}
				if rng.IntN(7) == 0 {
					s = nil
				}
				rows = append(rows, vt.Row{k, s, v, f})
			}
			rec := vt.BuildRecord(mem, liveRawSchema, rows)
			per, ok, err := vector.PartialRows(ctx, mem, rec, spec)
			if err != nil || !ok {
				t.Fatalf("%v step %d: PartialRows: %v, %v", keys, step, ok, err)
			}
			if per.NumRows() != rec.NumRows() {
				t.Fatalf("%v step %d: %d partial rows of %d", keys, step, per.NumRows(), rec.NumRows())
			}
			got := aggregateRecs(t, mem, per.Schema(), []arrow.Record{per}, partialStateSpecOf(per.Schema(), len(keys), aggs, vector.AggFinal))
			spec.Mode = vector.AggComplete
			want := aggregateRecs(t, mem, liveRawSchema, []arrow.Record{rec}, spec)
			if g, w := sortedRows(got...), sortedRows(want...); !slices.Equal(g, w) {
				t.Fatalf("%v step %d: per-row partials give\n%v\nwant\n%v", keys, step, g, w)
			}
			releaseRecords(got)
			releaseRecords(want)
			per.Release()
			rec.Release()
		}
	}
}

// TestPartialRowsDeclinesSketches: approx_count_distinct is left to the
// grouping partial aggregation.
func TestPartialRowsDeclinesSketches(t *testing.T) {
	mem := vt.NewAllocator(t)
	rec := vt.BuildRecord(mem, liveRawSchema, []vt.Row{{int64(1), "a", int64(2), 3.0}})
	defer rec.Release()
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")}, Aggregates: []vector.AggregateCall{call(vector.AggApproxCountDistinct, "x", "v")}}
	if out, ok, err := vector.PartialRows(context.Background(), mem, rec, spec); ok || err != nil || out != nil {
		t.Fatalf("PartialRows of approx_count_distinct: %v, %v", ok, err)
	}
}

// aggregateRecs runs spec over recs (borrowed).
func aggregateRecs(t *testing.T, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record, spec vector.AggregateSpec) []arrow.Record {
	t.Helper()
	scan, err := vector.NewScan(schema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	out, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// partialStateSpecOf is the aggregation over partial-state columns of
// schema whose first nKeys columns are the keys.
func partialStateSpecOf(schema *arrow.Schema, nKeys int, aggs []vector.AggregateCall, mode vector.AggMode) vector.AggregateSpec {
	var groupBy []vector.NamedExpr
	for i := range nKeys {
		name := schema.Field(i).Name
		groupBy = append(groupBy, vector.As(vector.Col(name), name))
	}
	return vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs, Mode: mode}
}

// TestFinalRowsMatchesFinalAggregation: on partial rows with distinct
// keys (a partial aggregation's output), FinalRows gives the AggFinal
// aggregation's rows, in the same order.
func TestFinalRowsMatchesFinalAggregation(t *testing.T) {
	ctx := context.Background()
	aggs := append(rawAggs(), call(vector.AggFirst, "fv", "v"), call(vector.AggLast, "ls", "s"), call(vector.AggApproxCountDistinct, "acd", "v"))
	for _, keys := range [][]string{{"k"}, {"k", "v"}, {"k", "s"}, nil} {
		mem := vt.NewAllocator(t)
		var groupBy []vector.NamedExpr
		for _, k := range keys {
			groupBy = append(groupBy, vector.As(vector.Col(k), k))
		}
		spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs}
		rng := rand.New(rand.NewPCG(9, uint64(len(keys))))
		for step := 0; step < 20; step++ {
			var rows []vt.Row
			for i := 0; i < rng.IntN(80); i++ {
				var k, s, v, f any = int64(rng.IntN(9)), []string{"a", "b"}[rng.IntN(2)], rng.Int64N(100) - 50, float64(rng.IntN(50))
				if rng.IntN(10) == 0 {
					k = nil
				}
				if rng.IntN(5) == 0 {
					v = nil
				}
				if rng.IntN(5) == 0 {
					f = nil
				}
				if rng.IntN(7) == 0 {
					s = nil
				}
				rows = append(rows, vt.Row{k, s, v, f})
			}
			for _, part := range partialOf(t, mem, spec, rows) {
				final := partialStateSpecOf(part.Schema(), len(keys), aggs, vector.AggFinal)
				got, ok, err := vector.FinalRows(ctx, mem, part, final)
				if err != nil || !ok {
					t.Fatalf("%v step %d: FinalRows: %v, %v", keys, step, ok, err)
				}
				want := aggregateRecs(t, mem, part.Schema(), []arrow.Record{part}, final)
				g := vt.Rows[vt.Row](vt.Normalizer{}, got)
				w := vt.Rows[vt.Row](vt.Normalizer{}, want...)
				if fmt.Sprint(g) != fmt.Sprint(w) {
					t.Fatalf("%v step %d: FinalRows\n%v\nwant\n%v", keys, step, g, w)
				}
				if !got.Schema().Equal(want[0].Schema()) {
					t.Fatalf("%v: schema %v, want %v", keys, got.Schema(), want[0].Schema())
				}
				got.Release()
				releaseRecords(want)
				part.Release()
			}
		}
	}
}
