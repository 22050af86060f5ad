package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestLiveAggregateMergeAtMatchesMerge folds the same random partial
// batches into two live aggregations, one by Merge and one by Groups then
// MergeAt, with the same deletions and compactions, and checks after every
// step that both give every row the same group and hold the same state
// for every group (first and last included: the fold order is the same).
func TestLiveAggregateMergeAtMatchesMerge(t *testing.T) {
	for _, keys := range [][]string{{"k"}, {"k", "s"}} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			var groupBy []vector.NamedExpr
			for _, k := range keys {
				groupBy = append(groupBy, vector.As(vector.Col(k), k))
			}
			spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: liveAggs()}
			partial, err := vector.PartialSchema(liveRawSchema, spec)
			if err != nil {
				t.Fatal(err)
			}
			var aggs [2]*vector.LiveAggregate // by Merge, by Groups and MergeAt
			for i := range aggs {
				if aggs[i], err = vector.NewLiveAggregate(mem, partial, len(keys), spec.Aggregates); err != nil {
					t.Fatal(err)
				}
				defer aggs[i].Close()
			}
			rng := rand.New(rand.NewPCG(11, uint64(len(keys))))
			ctx := context.Background()
			live := map[int32]bool{}
			for step := 0; step < 60; step++ {
				var raw []vt.Row
				for i := 0; i < 40; i++ {
					var k any = int64(rng.IntN(25))
					if rng.IntN(20) == 0 {
						k = nil
					}
					var v any = rng.Int64N(1000) - 500
					if rng.IntN(6) == 0 {
						v = nil
					}
					raw = append(raw, vt.Row{k, []string{"a", "b", "c"}[rng.IntN(3)], v, float64(rng.IntN(100))})
				}
				for _, rec := range partialOf(t, mem, spec, raw) {
					want, err := aggs[0].Merge(ctx, rec)
					if err != nil {
						t.Fatal(err)
					}
					want = slices.Clone(want)
					got, err := aggs[1].Groups(ctx, rec.Columns()[:len(keys)])
					if err != nil {
						t.Fatal(err)
					}
					got = slices.Clone(got)
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: groups %v, Merge's %v", step, got, want)
					}
					if err := aggs[1].MergeAt(ctx, rec, got); err != nil {
						t.Fatal(err)
					}
					for _, g := range got {
						live[g] = true
					}
					rec.Release()
				}
				switch rng.IntN(4) {
				case 0:
					var del []int32
					for g := range live {
						if rng.IntN(3) == 0 {
							del = append(del, g)
							delete(live, g)
						}
					}
					for _, a := range aggs {
						a.Delete(del)
					}
				case 1:
					var remaps [2][]int32
					for i, a := range aggs {
						if remaps[i], err = a.Compact(ctx); err != nil {
							t.Fatal(err)
						}
					}
					if !slices.Equal(remaps[0], remaps[1]) {
						t.Fatalf("step %d: compactions renumber differently", step)
					}
					next := map[int32]bool{}
					for g := range live {
						next[remaps[0][g]] = true
					}
					live = next
				}
				var gids []int32
				for g := range live {
					gids = append(gids, g)
				}
				var states [2]arrow.Record
				for i, a := range aggs {
					if a.NumLive() != len(live) {
						t.Fatalf("step %d: aggregation %d has %d live groups, want %d", step, i, a.NumLive(), len(live))
					}
					if states[i], err = a.State(gids); err != nil {
						t.Fatal(err)
					}
					defer states[i].Release()
				}
				if g, w := sortedRows(states[1]), sortedRows(states[0]); !slices.Equal(g, w) {
					t.Fatalf("step %d: state by MergeAt\n%v\nby Merge\n%v", step, g, w)
				}
			}
		})
	}
}

// TestLiveAggregateMergeAtRejects: groups out of range, a row count that
// is not the groups' and key columns of another layout are errors.
func TestLiveAggregateMergeAtRejects(t *testing.T) {
	mem := vt.NewAllocator(t)
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")}, Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}}}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	ctx := context.Background()
	recs := partialOf(t, mem, spec, []vt.Row{{int64(1), "a", int64(2), 1.0}, {int64(2), "a", int64(2), 1.0}})
	defer releaseRecords(recs)
	rec := recs[0]
	if _, err := live.Groups(ctx, nil); err == nil {
		t.Error("Groups of no key column: no error")
	}
	b := array.NewStringBuilder(mem)
	b.Append("x")
	s := b.NewArray()
	b.Release()
	defer s.Release()
	if _, err := live.Groups(ctx, []arrow.Array{s}); err == nil {
		t.Error("Groups of a string key for an integer one: no error")
	}
	if err := live.MergeAt(ctx, rec, []int32{0, 1}); err == nil {
		t.Error("MergeAt into groups that do not exist: no error")
	}
	gids, err := live.Groups(ctx, rec.Columns()[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := live.MergeAt(ctx, rec, gids[:1]); err == nil {
		t.Error("MergeAt of 2 rows into 1 group: no error")
	}
	if err := live.MergeAt(ctx, rec, []int32{0, -1}); err == nil {
		t.Error("MergeAt into group -1: no error")
	}
}
