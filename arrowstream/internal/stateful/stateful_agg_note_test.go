package stateful

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
)

// TestNoteGroupsMatchesNote folds random batches (GROUP BY k, t with t
// the time key, some t null) into a live aggregation through LiveRaw and
// notes each batch twice: row by row (note) on one aggLive and once per
// distinct group of the batch's tally (noteGroups) on another. Across
// epochs, deletions and compactions both must note the same changed
// groups in the same order, the same new ones, and index the same groups
// at the same times.
func TestNoteGroupsMatchesNote(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64},
		{Name: "t", Type: vector.Timestamp, Nullable: true},
	}, nil)
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")}
	spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}}}
	partial, err := vector.PartialSchema(schema, spec)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := vector.NewLiveAggregate(mem, partial, 2, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	raw, ok, err := agg.Raw(schema, groupBy)
	if err != nil || !ok {
		t.Fatalf("Raw: %v %v", ok, err)
	}
	byRow, byGroup := newAggLive(agg), newAggLive(agg)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 19))
	tallied := 0
	for epoch := range 40 {
		byRow.beginEpoch()
		byGroup.beginEpoch()
		for range 1 + rng.IntN(3) {
			n := 1 + rng.IntN(300)
			kb, tb := array.NewInt64Builder(mem), array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
			for range n {
				kb.Append(rng.Int64N(40))
				if rng.IntN(15) == 0 {
					tb.AppendNull()
				} else {
					tb.Append(arrow.Timestamp(int64(epoch+rng.IntN(3)) * 1_000_000))
				}
			}
			k, ts := kb.NewArray(), tb.NewArray()
			kb.Release()
			tb.Release()
			rec := array.NewRecord(schema, []arrow.Array{k, ts}, int64(n))
			k.Release()
			ts.Release()
			keys, err := raw.Keys(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			gids, err := raw.Update(ctx, rec, keys)
			if err != nil {
				t.Fatal(err)
			}
			times, valid := keys[1].(*array.Timestamp).TimestampValues(), keys[1]
			byRow.note(gids, times, valid)
			ids, first, ok := raw.Groups()
			if !ok {
				t.Fatal("batch not tallied")
			}
			tallied++
			byGroup.noteGroups(ids, first, times, valid)
			for _, a := range keys {
				a.Release()
			}
			rec.Release()
		}
		if !slices.Equal(byRow.dirty, byGroup.dirty) || !slices.Equal(byRow.added, byGroup.added) {
			t.Fatalf("epoch %d: by row dirty %v added %v; by group %v %v", epoch, byRow.dirty, byRow.added, byGroup.dirty, byGroup.added)
		}
		if !slices.Equal(byRow.indexed, byGroup.indexed) {
			t.Fatalf("epoch %d: indexed by row %v, by group %v", epoch, byRow.indexed, byGroup.indexed)
		}
		// Evict what is due, delete it, and sometimes compact, on both.
		limit := int64(epoch-1) * 1_000_000
		d1, d2 := byRow.due(limit), byGroup.due(limit)
		if fmt.Sprint(sorted(d1)) != fmt.Sprint(sorted(d2)) {
			t.Fatalf("epoch %d: due by row %v, by group %v", epoch, d1, d2)
		}
		byRow.remove(d1)
		byGroup.gone = growTo(byGroup.gone, agg.NumGroups())
		for _, g := range d2 {
			byGroup.gone[g] = true
		}
		if agg.NumGroups() > 0 && rng.IntN(4) == 0 {
			remap, err := agg.Compact(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []*aggLive{byRow, byGroup} {
				l.gone = remapFlags(l.gone, remap)
				l.indexed = remapFlags(l.indexed, remap)
				l.touched = nil
				if _, ok := l.times.remap(remap); !ok {
					t.Fatalf("epoch %d: time index remap failed", epoch)
				}
			}
		}
	}
	if tallied == 0 {
		t.Fatal("no batch was tallied")
	}
}

func sorted(s []int32) []int32 { s = slices.Clone(s); slices.Sort(s); return s }

// remapFlags carries flags by old group id over to the new ids (dropped
// groups' flags go).
func remapFlags(flags []bool, remap []int32) []bool {
	out := make([]bool, len(remap))
	for g, n := range remap {
		if n >= 0 && g < len(flags) {
			out[n] = flags[g]
		}
	}
	return out[:max(0, slices.Max(append(slices.Clone(remap), -1))+1)]
}
