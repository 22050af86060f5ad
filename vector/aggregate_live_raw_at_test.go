package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestLiveRawAtMatchesMergeAt feeds the same random input rows to two
// live aggregations keyed by an id of the caller's (as a session window
// keys its sessions), placing each row in a random group: one takes the
// rows' partial aggregation (one partial row per input row) through
// MergeAt, the other the input rows through LiveRawAt.UpdateAt. Groups
// are deleted and compacted alike; after every step every group's state
// must be the same in both.
func TestLiveRawAtMatchesMergeAt(t *testing.T) {
	mem := vt.NewAllocator(t)
	ctx := context.Background()
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("s"), "s")}
	spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: rawAggs(), Mode: vector.AggPartial}
	partial, err := vector.PartialSchema(liveRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	fields := append([]arrow.Field{{Name: "id", Type: vector.Int64}}, partial.Fields()[len(groupBy):]...)
	schema := arrow.NewSchema(fields, nil)
	viaMerge, err := vector.NewLiveAggregate(mem, schema, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer viaMerge.Close()
	viaRaw, err := vector.NewLiveAggregate(mem, schema, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer viaRaw.Close()
	raw, ok, err := viaRaw.RawAt(liveRawSchema, groupBy)
	if err != nil || !ok {
		t.Fatalf("RawAt: %v, %v", ok, err)
	}
	if kt := raw.KeyTypes(); len(kt) != 2 || !arrow.TypeEqual(kt[0], vector.Int64) || !arrow.TypeEqual(kt[1], vector.String) {
		t.Fatalf("key types %v", kt)
	}
	rng := rand.New(rand.NewPCG(5, 7))
	for step := 0; step < 80; step++ {
		var rows []vt.Row
		for i := 0; i < rng.IntN(50); i++ {
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
			rows = append(rows, vt.Row{int64(rng.IntN(5)), s, v, f})
		}
		ids := make([]int64, len(rows))
		for i := range ids {
			ids[i] = int64(rng.IntN(30))
		}
		gids := groupsOf(t, mem, viaMerge, ids)
		if got := groupsOf(t, mem, viaRaw, ids); fmt.Sprint(got) != fmt.Sprint(gids) {
			t.Fatalf("step %d: groups %v and %v", step, got, gids)
		}
		rec := vt.BuildRecord(mem, liveRawSchema, rows)
		keys, err := raw.Keys(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].Len() != len(rows) {
			t.Fatalf("step %d: %d key columns", step, len(keys))
		}
		for i, k := range keys {
			if !array.Equal(k, rec.Column([]int{0, 1}[i])) {
				t.Fatalf("step %d: key %d is not the input's column", step, i)
			}
			k.Release()
		}
		if err := raw.UpdateAt(ctx, rec, gids); err != nil {
			t.Fatal(err)
		}
		p, ok, err := vector.PartialRows(ctx, mem, rec, spec)
		rec.Release()
		if err != nil || !ok {
			t.Fatalf("PartialRows: %v, %v", ok, err)
		}
		in := withIDs(mem, schema, ids, p.Columns()[len(groupBy):])
		p.Release()
		err = viaMerge.MergeAt(ctx, in, gids)
		in.Release()
		if err != nil {
			t.Fatal(err)
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
			if fmt.Sprint(r1) != fmt.Sprint(r2) {
				t.Fatalf("step %d: compaction remaps differ", step)
			}
		}
		if viaRaw.NumGroups() != viaMerge.NumGroups() || viaRaw.NumLive() != viaMerge.NumLive() {
			t.Fatalf("step %d: raw %d/%d groups, merged %d/%d", step, viaRaw.NumLive(), viaRaw.NumGroups(), viaMerge.NumLive(), viaMerge.NumGroups())
		}
		requireSameState(t, step, viaRaw, viaMerge)
	}
	one := vt.BuildRecord(mem, liveRawSchema, []vt.Row{{int64(1), "a", int64(2), 1.0}})
	defer one.Release()
	if err := raw.UpdateAt(ctx, one, []int32{int32(viaRaw.NumGroups())}); err == nil {
		t.Error("UpdateAt folded a row into a group that does not exist")
	}
	if err := raw.UpdateAt(ctx, one, nil); err == nil {
		t.Error("UpdateAt folded one row into no groups")
	}
}

// groupsOf returns the groups of ids in l (made when new), copied.
func groupsOf(t *testing.T, mem memory.Allocator, l *vector.LiveAggregate, ids []int64) []int32 {
	t.Helper()
	b := array.NewInt64Builder(mem)
	b.AppendValues(ids, nil)
	a := b.NewArray()
	b.Release()
	defer a.Release()
	gids, err := l.Groups(context.Background(), []arrow.Array{a})
	if err != nil {
		t.Fatal(err)
	}
	return append([]int32(nil), gids...)
}

// withIDs is the record of schema: an id column, then states (borrowed).
func withIDs(mem memory.Allocator, schema *arrow.Schema, ids []int64, states []arrow.Array) arrow.Record {
	b := array.NewInt64Builder(mem)
	b.AppendValues(ids, nil)
	a := b.NewArray()
	b.Release()
	defer a.Release()
	return array.NewRecord(schema, append([]arrow.Array{a}, states...), int64(len(ids)))
}

// TestLiveRawAtDeclines: calls whose state cannot take input rows make
// RawAt decline (the caller aggregates partially and uses MergeAt).
func TestLiveRawAtDeclines(t *testing.T) {
	mem := vt.NewAllocator(t)
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k")}
	for _, c := range []vector.AggregateCall{call(vector.AggFirst, "x", "v"), call(vector.AggLast, "x", "s"), call(vector.AggApproxCountDistinct, "x", "v")} {
		spec := vector.AggregateSpec{GroupBy: groupBy, Aggregates: []vector.AggregateCall{c}}
		partial, err := vector.PartialSchema(liveRawSchema, spec)
		if err != nil {
			t.Fatal(err)
		}
		live, err := vector.NewLiveAggregate(mem, partial, 1, spec.Aggregates)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := live.RawAt(liveRawSchema, groupBy); ok || err != nil {
			t.Errorf("%s: RawAt took it (%v, %v)", c, ok, err)
		}
		live.Close()
	}
}

// BenchmarkLiveRawAt folds 64K input rows (SUM, COUNT) into 10K groups the
// caller already knows (each row's group given, as a session window gives
// its sessions'): "mergeAt" makes a partial row per input row
// (PartialRows) and folds those with MergeAt, "updateAt" folds the input
// rows straight in (LiveRawAt.UpdateAt). Compare the two in one run:
//
//	go test -run '^$' -bench 'BenchmarkLiveRawAt' -cpu 1 ./vector/
func BenchmarkLiveRawAt(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	groupBy := []vector.NamedExpr{vector.As(vector.Col("k"), "k")}
	spec := vector.AggregateSpec{GroupBy: groupBy, Mode: vector.AggPartial, Aggregates: []vector.AggregateCall{
		{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "s"},
		{Func: vector.AggCountStar, Name: "n"},
	}}
	keys, vals := benchAggData(benchAggBatch, 10_000, 3)
	recs := benchAggRecords(keys, vals)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	partial, err := vector.PartialSchema(benchAggSchema, spec)
	if err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema(append([]arrow.Field{{Name: "id", Type: vector.Int64}}, partial.Fields()[1:]...), nil)
	setup := func(b *testing.B) (*vector.LiveAggregate, [][]int32, [][]int64) {
		live, err := vector.NewLiveAggregate(mem, schema, 1, spec.Aggregates)
		if err != nil {
			b.Fatal(err)
		}
		var gids [][]int32
		var ids [][]int64
		for _, r := range recs {
			// The rows' groups: the group of their key, as ids.
			k := r.Column(0).(*array.Int64).Int64Values()
			gids = append(gids, groupsOfBench(b, mem, live, k))
			ids = append(ids, k)
		}
		return live, gids, ids
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("mergeAt", func(b *testing.B) {
		live, gids, ids := setup(b)
		defer live.Close()
		b.ResetTimer()
		for range b.N {
			for i, r := range recs {
				p, ok, err := vector.PartialRows(ctx, mem, r, spec)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				in := withIDs(mem, schema, ids[i], p.Columns()[1:])
				p.Release()
				err = live.MergeAt(ctx, in, gids[i])
				in.Release()
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	b.Run("updateAt", func(b *testing.B) {
		live, gids, _ := setup(b)
		defer live.Close()
		raw, ok, err := live.RawAt(benchAggSchema, groupBy)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		b.ResetTimer()
		for range b.N {
			for i, r := range recs {
				if err := raw.UpdateAt(ctx, r, gids[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
}

// groupsOfBench is groupsOf for a benchmark.
func groupsOfBench(b *testing.B, mem memory.Allocator, l *vector.LiveAggregate, ids []int64) []int32 {
	bl := array.NewInt64Builder(mem)
	bl.AppendValues(ids, nil)
	a := bl.NewArray()
	bl.Release()
	defer a.Release()
	gids, err := l.Groups(context.Background(), []arrow.Array{a})
	if err != nil {
		b.Fatal(err)
	}
	return append([]int32(nil), gids...)
}
