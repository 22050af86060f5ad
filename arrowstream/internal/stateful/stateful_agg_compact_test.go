package stateful

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestLiveCompactsBeforeGrowth folds a sliding window's panes as q5 does
// (GROUP BY k, t: 600 new groups an epoch, each kept 10 epochs, then
// evicted and deleted) and compacts the live state once an epoch as
// Execute does. Dead groups never reach half of the ids, so compacting
// only then let the ids reach twice the live groups and the words table
// double; compact must drop them when the next epoch's new groups would
// otherwise grow the table, so the ids stay within the half of a table
// that the live groups and one epoch's new ones need (16384 slots).
func TestLiveCompactsBeforeGrowth(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64},
		{Name: "t", Type: vector.Timestamp},
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
	l := newAggLive(agg)
	ctx := context.Background()
	const perEpoch, keep = 600, 10
	maxIDs := 0
	for epoch := range 60 {
		l.beginEpoch()
		kb, tb := array.NewInt64Builder(mem), array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
		for k := range perEpoch {
			for r := range 3 { // rows into this epoch's pane and the open ones
				kb.Append(int64(k))
				tb.Append(arrow.Timestamp(int64(max(epoch-r*3, 0)) * 1_000_000))
			}
		}
		k, ts := kb.NewArray(), tb.NewArray()
		kb.Release()
		tb.Release()
		rec := array.NewRecord(schema, []arrow.Array{k, ts}, int64(k.Len()))
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
		l.note(gids, keys[1].(*array.Timestamp).TimestampValues(), keys[1])
		releaseArrays(keys)
		rec.Release()
		maxIDs = max(maxIDs, agg.NumGroups())
		l.remove(l.due(int64(epoch-keep) * 1_000_000))
		if err := l.compact(ctx); err != nil {
			t.Fatal(err)
		}
		if live := agg.NumLive(); live > keep*perEpoch+perEpoch {
			t.Fatalf("epoch %d: %d live groups, want at most %d", epoch, live, keep*perEpoch+perEpoch)
		}
	}
	if maxIDs > 8192 {
		t.Fatalf("group ids reached %d; compacting before the table grows keeps them at most 8192", maxIDs)
	}
}
