package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// rawAggs are calls whose state takes input rows directly.
func rawAggs() []vector.AggregateCall {
	return []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggCount, "nv", "v"),
		{Func: vector.AggCount, Name: "nvf", Args: []vector.Expr{vector.Col("v"), vector.Col("f")}},
		call(vector.AggSum, "sv", "v"),
		call(vector.AggSum, "sf", "f"),
		call(vector.AggMin, "minv", "v"),
		call(vector.AggMax, "maxs", "s"),
		call(vector.AggMax, "maxf", "f"),
		call(vector.AggAvg, "avgf", "f"),
		call(vector.AggAvg, "avgv", "v"),
	}
}

// TestLiveRawMatchesMerge feeds the same random batches to two live
// aggregations, one through partial aggregation and Merge, the other
// through LiveRaw.Update, deleting and compacting the same groups in both:
// after every step both give the same group ids and the same state of
// every group, in order.
func TestLiveRawMatchesMerge(t *testing.T) {
	for _, keys := range [][]string{{"k"}, {"k", "v"}, {"k", "s"}, nil} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			var groupBy []vector.NamedExpr
			for _, k := range keys {
				groupBy = append(groupBy, vector.As(vector.Col(k), k))
			}
			spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: rawAggs()}
			partial, err := vector.PartialSchema(liveRawSchema, spec)
			if err != nil {
				t.Fatal(err)
			}
			viaMerge, err := vector.NewLiveAggregate(mem, partial, len(keys), spec.Aggregates)
			if err != nil {
				t.Fatal(err)
			}
			defer viaMerge.Close()
			viaRaw, err := vector.NewLiveAggregate(mem, partial, len(keys), spec.Aggregates)
			if err != nil {
				t.Fatal(err)
			}
			defer viaRaw.Close()
			raw, ok, err := viaRaw.Raw(liveRawSchema, groupBy)
			if err != nil || !ok {
				t.Fatalf("Raw: %v, %v", ok, err)
			}
			rng := rand.New(rand.NewPCG(11, uint64(len(keys))))
			ctx := context.Background()
			for step := 0; step < 60; step++ {
				var rows []vt.Row
				for i := 0; i < 1+rng.IntN(60); i++ {
					var k any = int64(rng.IntN(25))
					if rng.IntN(20) == 0 {
						k = nil
					}
					var v any = rng.Int64N(1000) - 500
					if rng.IntN(6) == 0 {
						v = nil
					}
					var f any = float64(rng.IntN(100))
					if rng.IntN(6) == 0 {
						f = nil
					}
					var s any = []string{"a", "b", "c"}[rng.IntN(3)]
					if rng.IntN(9) == 0 {
						s = nil
					}
					rows = append(rows, vt.Row{k, s, v, f})
				}
				var mergeIDs []int32
				for _, rec := range partialOf(t, mem, spec, rows) {
					gids, err := viaMerge.Merge(ctx, rec)
					if err != nil {
						t.Fatal(err)
					}
					mergeIDs = append(mergeIDs, gids...)
					rec.Release()
				}
				gids := updateLiveRaw(t, ctx, mem, raw, rows)
				// The raw ids, first appearance first, are the merged ones.
				var firstSeen []int32
				for _, g := range gids {
					if !slices.Contains(firstSeen, g) {
						firstSeen = append(firstSeen, g)
					}
				}
				if !slices.Equal(firstSeen, mergeIDs) {
					t.Fatalf("step %d: raw groups %v, merged %v", step, firstSeen, mergeIDs)
				}
				// The batch's tally: its distinct groups in the same order,
				// each with its first row.
				ids, first, ok := raw.Groups()
				if !ok || !slices.Equal(ids, firstSeen) || len(first) != len(ids) {
					t.Fatalf("step %d: Groups %v (%v), want %v", step, ids, ok, firstSeen)
				}
				for j, g := range ids {
					if i := slices.Index(gids, g); int(first[j]) != i {
						t.Fatalf("step %d: group %d first at row %d, Groups says %d", step, g, i, first[j])
					}
				}
				if viaRaw.NumGroups() != viaMerge.NumGroups() || viaRaw.NumLive() != viaMerge.NumLive() {
					t.Fatalf("step %d: raw %d/%d groups, merged %d/%d", step, viaRaw.NumLive(), viaRaw.NumGroups(), viaMerge.NumLive(), viaMerge.NumGroups())
				}
				switch rng.IntN(4) {
				case 0:
					var del []int32
					for g := range int32(viaRaw.NumGroups()) {
						if !viaRaw.IsDead(g) && rng.IntN(3) == 0 {
							del = append(del, g)
						}
					}
					viaRaw.Delete(del)
					viaMerge.Delete(del)
				case 1:
					r1, err := viaRaw.Compact(ctx)
					if err != nil {
						t.Fatal(err)
					}
					r2, err := viaMerge.Compact(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(r1, r2) {
						t.Fatalf("step %d: compaction remaps differ", step)
					}
				}
				requireSameState(t, step, viaRaw, viaMerge)
			}
		})
	}
}

// TestLiveRawDeclines: calls whose state cannot take input rows make Raw
// decline (the caller aggregates partially), and keys of another type are
// an error.
func TestLiveRawDeclines(t *testing.T) {
	mem := vt.NewAllocator(t)
	for _, c := range []vector.AggregateCall{call(vector.AggFirst, "x", "v"), call(vector.AggLast, "x", "s"), call(vector.AggApproxCountDistinct, "x", "v")} {
		spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")}, Aggregates: []vector.AggregateCall{c}}
		partial, err := vector.PartialSchema(liveRawSchema, spec)
		if err != nil {
			t.Fatal(err)
		}
		live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := live.Raw(liveRawSchema, spec.GroupBy); ok || err != nil {
			t.Errorf("%s: Raw took it (%v, %v)", c, ok, err)
		}
		live.Close()
	}
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")}, Aggregates: rawAggs()}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if _, _, err := live.Raw(liveRawSchema, []vector.NamedExpr{vector.As(vector.Col("s"), "k")}); err == nil {
		t.Error("Raw bound a string key to a bigint key")
	}
	if _, _, err := live.Raw(liveRawSchema, nil); err == nil {
		t.Error("Raw bound no keys to a keyed aggregation")
	}
}

// requireSameState fails the test when raw's state of every group is not
// merged's, row for row (the oracle of the raw-fold tests).
func requireSameState(t *testing.T, step int, raw, merged *vector.LiveAggregate) {
	t.Helper()
	all := make([]int32, raw.NumGroups())
	for i := range all {
		all[i] = int32(i)
	}
	got, err := raw.State(all)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want, err := merged.State(all)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	g, w := vt.Rows[vt.Row](vt.Normalizer{}, got), vt.Rows[vt.Row](vt.Normalizer{}, want)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("step %d: raw state\n%v\nmerged\n%v", step, g, w)
	}
}

// updateLiveRaw builds rows into a record of liveRawSchema, folds it into
// raw and returns the rows' group ids; the record and its key columns
// are released.
func updateLiveRaw(t *testing.T, ctx context.Context, mem memory.Allocator, raw *vector.LiveRaw, rows []vt.Row) []int32 {
	t.Helper()
	rec := vt.BuildRecord(mem, liveRawSchema, rows)
	defer rec.Release()
	keyCols, err := raw.Keys(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	gids, err := raw.Update(ctx, rec, keyCols)
	for _, a := range keyCols {
		a.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	return gids
}
