package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var liveRawSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
	{Name: "f", Type: vector.Float64, Nullable: true},
}, nil)

func liveAggs() []vector.AggregateCall {
	acd := call(vector.AggApproxCountDistinct, "acd", "v")
	lastS := call(vector.AggLast, "lasts", "s")
	return []vector.AggregateCall{
		{Func: vector.AggCountStar, Name: "n"},
		call(vector.AggSum, "sv", "v"),
		call(vector.AggMin, "minv", "v"),
		call(vector.AggMax, "maxs", "s"),
		call(vector.AggAvg, "avgf", "f"),
		call(vector.AggFirst, "firstv", "v"),
		lastS,
		acd,
		// List state: collect_set's reset must forget a deleted group's
		// values (a later merge of the same value adds it again).
		call(vector.AggCollectSet, "setv", "v"),
		call(vector.AggCollectList, "listv", "v"),
	}
}

// partialOf runs the partial aggregation of raw rows.
func partialOf(t *testing.T, mem memory.Allocator, spec vector.AggregateSpec, rows []vt.Row) []arrow.Record {
	t.Helper()
	rec := vt.BuildRecord(mem, liveRawSchema, rows)
	scan, err := vector.NewScan(liveRawSchema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	spec.Mode = vector.AggPartial
	op, err := vector.NewHashAggregate(mem, scan, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	recs, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func sortedRows(recs ...arrow.Record) []string {
	var out []string
	for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
		out = append(out, fmt.Sprint(r))
	}
	slices.Sort(out)
	return out
}

// TestLiveAggregateMatchesBatch merges random partial batches into a live
// aggregation, deleting and compacting groups at random, and checks after
// every step that the state of every live group equals the partial
// aggregation of the raw rows merged into it since its last deletion.
func TestLiveAggregateMatchesBatch(t *testing.T) {
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
			live, err := vector.NewLiveAggregate(mem, partial, len(keys), spec.Aggregates)
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			rng := rand.New(rand.NewPCG(7, uint64(len(keys))))
			keyOf := func(r vt.Row) string { return fmt.Sprint(r[:len(keys)]...) }
			model := map[string][]vt.Row{} // raw rows of live groups
			gidOf := map[string]int32{}
			ctx := context.Background()
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
					var f any = float64(rng.IntN(100))
					if rng.IntN(6) == 0 {
						f = nil
					}
					row := vt.Row{k, []string{"a", "b", "c"}[rng.IntN(3)], v, f}
					raw = append(raw, row)
					kr := vt.Row{row[0], row[1]}
					model[keyOf(kr)] = append(model[keyOf(kr)], row)
				}
				for _, rec := range partialOf(t, mem, spec, raw) {
					gids, err := live.Merge(ctx, rec)
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range vt.Rows[vt.Row](vt.Normalizer{}, rec) {
						gidOf[keyOf(r)] = gids[i]
					}
					rec.Release()
				}
				switch rng.IntN(4) {
				case 0: // delete about a third of the groups
					var del []int32
					for k, g := range gidOf {
						if rng.IntN(3) == 0 {
							del = append(del, g)
							delete(model, k)
							delete(gidOf, k)
						}
					}
					live.Delete(del)
				case 1:
					remap, err := live.Compact(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for k, g := range gidOf {
						if remap[g] < 0 {
							t.Fatalf("step %d: live group %s (id %d) dropped by Compact", step, k, g)
						}
						gidOf[k] = remap[g]
					}
				}
				if live.NumLive() != len(gidOf) {
					t.Fatalf("step %d: %d live groups, want %d", step, live.NumLive(), len(gidOf))
				}
				var gids []int32
				var all []vt.Row
				for k, g := range gidOf {
					gids = append(gids, g)
					all = append(all, model[k]...)
				}
				got, err := live.State(gids)
				if err != nil {
					t.Fatal(err)
				}
				want := partialOf(t, mem, spec, all)
				if g, w := sortedRows(got), sortedRows(want...); !slices.Equal(g, w) {
					t.Fatalf("step %d: state\n%v\nwant\n%v", step, g, w)
				}
				// Values are State's columns after the keys.
				vals, err := live.Values(gids)
				if err != nil {
					t.Fatal(err)
				}
				if len(vals) != int(got.NumCols())-len(keys) {
					t.Fatalf("step %d: %d value columns, state has %d after %d keys", step, len(vals), got.NumCols(), len(keys))
				}
				for i, v := range vals {
					if !array.Equal(v, got.Column(len(keys)+i)) {
						t.Fatalf("step %d: value column %d\n%v\nstate's\n%v", step, i, v, got.Column(len(keys)+i))
					}
					v.Release()
				}
				got.Release()
				releaseRecords(want)
			}
		})
	}
}

// TestLiveAggregateRejectsWrongLayout: rows of another layout are refused
// with an error naming the column.
func TestLiveAggregateRejectsWrongLayout(t *testing.T) {
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: []vector.AggregateCall{call(vector.AggSum, "s", "v")}}
	partial, err := vector.PartialSchema(aggSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vector.NewLiveAggregate(memory.DefaultAllocator, partial, 1, []vector.AggregateCall{call(vector.AggMin, "m", "v")}); err == nil {
		t.Fatal("a live aggregation over another aggregate's state was accepted")
	}
	if _, err := vector.NewLiveAggregate(memory.DefaultAllocator, partial, 5, spec.Aggregates); err == nil {
		t.Fatal("a live aggregation with more keys than columns was accepted")
	}
}
