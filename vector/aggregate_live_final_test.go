package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// finalAggs are the aggregates LiveAggregate.Final finalizes by group:
// counts, sums and averages of integers, doubles and decimals, min and max
// of numbers and strings, first and last.
func finalAggs() []vector.AggregateCall {
	dec := vector.Cast(vector.Col("v"), vector.Decimal(12, 2))
	return append(rawAggs(),
		call(vector.AggFirst, "fv", "v"),
		call(vector.AggLast, "ls", "s"),
		vector.AggregateCall{Func: vector.AggSum, Name: "sd", Args: []vector.Expr{dec}},
		vector.AggregateCall{Func: vector.AggAvg, Name: "ad", Args: []vector.Expr{dec}},
		vector.AggregateCall{Func: vector.AggMin, Name: "mind", Args: []vector.Expr{dec}},
	)
}

// TestLiveFinalMatchesFinalRows merges random partial batches into a live
// aggregation, deleting and compacting groups at random, and checks after
// every step that Final of a random subset of the groups (in random
// order, dead and repeated ids included) equals FinalRows of their State:
// the same schema, the same values, row by row.
func TestLiveFinalMatchesFinalRows(t *testing.T) {
	ctx := context.Background()
	aggs := finalAggs()
	for _, keys := range [][]string{{"k"}, {"k", "v"}, {"k", "s"}, nil} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			var groupBy []vector.NamedExpr
			for _, k := range keys {
				groupBy = append(groupBy, vector.As(vector.Col(k), k))
			}
			spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: aggs}
			partial, err := vector.PartialSchema(liveRawSchema, spec)
			if err != nil {
				t.Fatal(err)
			}
			live, err := vector.NewLiveAggregate(mem, partial, len(keys), aggs)
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			final := partialStateSpecOf(partial, len(keys), aggs, vector.AggFinal)
			rng := rand.New(rand.NewPCG(11, uint64(len(keys))))
			for step := 0; step < 40; step++ {
				var rows []vt.Row
				for i := 0; i < rng.IntN(120); i++ {
					var k, s, v, f any = int64(rng.IntN(30)), []string{"a", "bb", "ccc"}[rng.IntN(3)], rng.Int64N(1000) - 500, float64(rng.IntN(50)) - 20
					if rng.IntN(10) == 0 {
						k = nil
					}
					if rng.IntN(4) == 0 {
						v = nil
					}
					if rng.IntN(4) == 0 {
						f = nil
					}
					if rng.IntN(7) == 0 {
						s = nil
					}
					rows = append(rows, vt.Row{k, s, v, f})
				}
				for _, rec := range partialOf(t, mem, spec, rows) {
					if _, err := live.Merge(ctx, rec); err != nil {
						t.Fatal(err)
					}
					rec.Release()
				}
				switch rng.IntN(4) {
				case 0:
					var del []int32
					for g := range live.NumGroups() {
						if rng.IntN(3) == 0 {
							del = append(del, int32(g))
						}
					}
					live.Delete(del)
				case 1:
					if _, err := live.Compact(ctx); err != nil {
						t.Fatal(err)
					}
				}
				var gids []int32
				for range rng.IntN(live.NumGroups() + 1) {
					gids = append(gids, int32(rng.IntN(live.NumGroups())))
				}
				got, ok, err := live.Final(gids)
				if err != nil || !ok {
					t.Fatalf("step %d: Final: %v, %v", step, ok, err)
				}
				st, err := live.State(gids)
				if err != nil {
					t.Fatal(err)
				}
				want, ok, err := vector.FinalRows(ctx, mem, st, final)
				st.Release()
				if err != nil || !ok {
					t.Fatalf("step %d: FinalRows: %v, %v", step, ok, err)
				}
				if !got.Schema().Equal(want.Schema()) {
					t.Fatalf("step %d: schema %v, want %v", step, got.Schema(), want.Schema())
				}
				if !array.RecordEqual(got, want) {
					t.Fatalf("step %d: Final\n%v\nwant\n%v", step,
						vt.Rows[vt.Row](vt.Normalizer{}, got), vt.Rows[vt.Row](vt.Normalizer{}, want))
				}
				got.Release()
				want.Release()
			}
		})
	}
}

// TestLiveFinalDeclines: an aggregate whose state is not finalized by group
// (collect_set) makes Final decline without a record, and a group id out
// of range is an error naming it.
func TestLiveFinalDeclines(t *testing.T) {
	mem := vt.NewAllocator(t)
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")}, Aggregates: liveAggs()}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for _, rec := range partialOf(t, mem, spec, []vt.Row{{int64(1), "a", int64(2), 3.0}}) {
		if _, err := live.Merge(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if rec, ok, err := live.Final([]int32{0}); ok || rec != nil || err != nil {
		t.Fatalf("Final with collect_set: %v, %v, %v; want a decline", rec, ok, err)
	}
	sum := []vector.AggregateCall{call(vector.AggSum, "sv", "v")}
	spec.Aggregates = sum
	partial, err = vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live2, err := vector.NewLiveAggregate(mem, partial, 1, sum)
	if err != nil {
		t.Fatal(err)
	}
	defer live2.Close()
	if _, _, err := live2.Final([]int32{3}); err == nil {
		t.Fatal("Final of group 3 of 0: no error")
	}
}
