package vector_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestLiveFinalScratchNotCarried: Final's accumulators reuse their
// validity and count scratch from one call to the next (one epoch to the
// next). A second epoch with other keys, fewer groups and null values
// where the first had values must get its own answers, and the first
// epoch's record, still held, must keep its values (no output array is
// built over the reused scratch).
func TestLiveFinalScratchNotCarried(t *testing.T) {
	ctx := context.Background()
	mem := vt.NewAllocator(t)
	aggs := []vector.AggregateCall{
		call(vector.AggSum, "sv", "v"),
		call(vector.AggMin, "minv", "v"),
		call(vector.AggMax, "maxv", "v"),
		call(vector.AggAvg, "av", "v"),
		call(vector.AggCount, "nv", "v"),
	}
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: aggs}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, aggs)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// merge folds rows into live and returns the group of each key.
	merge := func(rows []vt.Row) map[int64]int32 {
		ids := map[int64]int32{}
		for _, rec := range partialOf(t, mem, spec, rows) {
			gids, err := live.Merge(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			keys := rec.Column(0).(*array.Int64)
			for i, g := range gids {
				ids[keys.Value(i)] = g
			}
			rec.Release()
		}
		return ids
	}
	final := func(ids map[int64]int32, keys ...int64) arrow.Record {
		gids := make([]int32, len(keys))
		for i, k := range keys {
			gids[i] = ids[k]
		}
		rec, ok, err := live.Final(gids)
		if err != nil || !ok {
			t.Fatalf("Final: %v, %v", ok, err)
		}
		return rec
	}
	check := func(what string, rec arrow.Record, want []vt.Row) {
		t.Helper()
		got := vt.Rows[vt.Row](vt.Normalizer{}, rec)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}

	// Epoch 1: six groups, every one with values.
	var rows []vt.Row
	for k := int64(1); k <= 6; k++ {
		rows = append(rows, vt.Row{k, "a", 10 * k, 0.0}, vt.Row{k, "b", 10*k + 2, 0.0})
	}
	ids1 := merge(rows)
	first := final(ids1, 1, 2, 3, 4, 5, 6)
	defer first.Release()
	want1 := []vt.Row{
		{int64(1), int64(22), int64(10), int64(12), 11.0, int64(2)},
		{int64(2), int64(42), int64(20), int64(22), 21.0, int64(2)},
		{int64(3), int64(62), int64(30), int64(32), 31.0, int64(2)},
		{int64(4), int64(82), int64(40), int64(42), 41.0, int64(2)},
		{int64(5), int64(102), int64(50), int64(52), 51.0, int64(2)},
		{int64(6), int64(122), int64(60), int64(62), 61.0, int64(2)},
	}
	check("epoch 1", first, want1)

	// Epoch 2: two other keys, one of them seeing only nulls, finalized
	// in the order opposite to their arrival.
	ids2 := merge([]vt.Row{{int64(10), "c", nil, 0.0}, {int64(11), "d", int64(-5), 0.0}, {int64(10), "e", nil, 0.0}})
	second := final(ids2, 11, 10)
	defer second.Release()
	check("epoch 2", second, []vt.Row{
		{int64(11), int64(-5), int64(-5), int64(-5), -5.0, int64(1)},
		{int64(10), nil, nil, nil, nil, int64(0)},
	})
	// The first epoch's output is untouched by the second's finalizing.
	check("epoch 1 after epoch 2", first, want1)
}

// TestLiveCompactScratchNotCarried: Compact reuses its remap and live-id
// scratch from one compaction to the next. A second compaction over fewer
// groups, with other keys, must renumber only what it has (its remap as
// long as its groups, every entry its own) and keep the right values.
func TestLiveCompactScratchNotCarried(t *testing.T) {
	ctx := context.Background()
	mem := vt.NewAllocator(t)
	aggs := []vector.AggregateCall{call(vector.AggSum, "sv", "v")}
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: aggs}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	live, err := vector.NewLiveAggregate(mem, partial, 1, aggs)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	ids := map[int64]int32{}
	merge := func(rows []vt.Row) {
		for _, rec := range partialOf(t, mem, spec, rows) {
			gids, err := live.Merge(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			keys := rec.Column(0).(*array.Int64)
			for i, g := range gids {
				ids[keys.Value(i)] = g
			}
			rec.Release()
		}
	}
	// compact deletes the keys drop, compacts, renumbers ids and checks
	// the remap against them.
	compact := func(drop ...int64) {
		t.Helper()
		var del []int32
		for _, k := range drop {
			del = append(del, ids[k])
		}
		live.Delete(del)
		before := live.NumGroups()
		remap, err := live.Compact(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(remap) != before {
			t.Fatalf("remap of %d entries for %d groups", len(remap), before)
		}
		for _, k := range drop {
			if remap[ids[k]] != -1 {
				t.Errorf("dropped key %d renumbered %d", k, remap[ids[k]])
			}
			delete(ids, k)
		}
		next := int32(0)
		for old, g := range remap {
			if g < 0 {
				continue
			}
			if g != next {
				t.Fatalf("old group %d renumbered %d, want %d", old, g, next)
			}
			next++
		}
		for k, g := range ids {
			ids[k] = remap[g]
		}
		if live.NumGroups() != len(ids) {
			t.Fatalf("%d groups after compaction, want %d", live.NumGroups(), len(ids))
		}
	}
	sums := func() map[int64]any {
		got := map[int64]any{}
		for k, g := range ids {
			rec, ok, err := live.Final([]int32{g})
			if err != nil || !ok {
				t.Fatalf("Final: %v, %v", ok, err)
			}
			got[k] = vt.Rows[vt.Row](vt.Normalizer{}, rec)[0][1]
			rec.Release()
		}
		return got
	}

	var rows []vt.Row
	for k := int64(1); k <= 2000; k++ {
		rows = append(rows, vt.Row{k, "a", k, 0.0})
	}
	merge(rows)
	var drop []int64
	for k := int64(1); k <= 2000; k += 2 {
		drop = append(drop, k)
	}
	compact(drop...) // 1000 of 2000 ids
	// The second epoch: other keys, fewer groups in all after dropping
	// most of the first epoch's.
	merge([]vt.Row{{int64(5000), "b", int64(7), 0.0}, {int64(5001), "c", nil, 0.0}, {int64(2), "d", int64(1), 0.0}})
	drop = drop[:0]
	for k := int64(4); k <= 2000; k += 2 {
		drop = append(drop, k)
	}
	compact(drop...) // 999 of 1003 ids
	want := map[int64]any{2: int64(3), 5000: int64(7), 5001: nil}
	if got := sums(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sums after the second compaction: %v, want %v", got, want)
	}
}
