package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var compactRawSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k1", Type: Int64, Nullable: true},
	{Name: "k2", Type: Int32, Nullable: true},
	{Name: "v", Type: Int64, Nullable: true},
	{Name: "f", Type: Float64, Nullable: true},
	{Name: "s", Type: String, Nullable: true},
}, nil)

// compactRawBatch builds n random rows of compactRawSchema over a small
// key domain, with nulls in every column.
func compactRawBatch(mem memory.Allocator, rng *rand.Rand, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, compactRawSchema)
	defer b.Release()
	null := func() bool { return rng.IntN(8) == 0 }
	for range n {
		if null() {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(rng.Int64N(12) - 3)
		}
		if null() {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(rng.Int32N(5))
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(rng.Int64N(1000) - 500)
		}
		if null() {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(float64(rng.IntN(100)) / 4)
		}
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprint("s", rng.IntN(30)))
		}
	}
	return b.NewRecord()
}

// TestLiveCompactInPlaceMatchesRebuild keeps two live aggregations of the
// same partial rows, deletes the same random groups from both and
// compacts one in place and the other by rebuilding it from its state
// (the general path): the remaps, the group ids later rows get and the
// state of every group must stay identical.
func TestLiveCompactInPlaceMatchesRebuild(t *testing.T) {
	col := func(name string) []Expr { return []Expr{Col(name)} }
	spec := AggregateSpec{
		GroupBy: []NamedExpr{{Name: "k1", Expr: Col("k1")}, {Name: "k2", Expr: Col("k2")}},
		Aggregates: []AggregateCall{
			{Func: AggCountStar, Name: "n"},
			{Func: AggCount, Args: col("v"), Name: "nv"},
			{Func: AggSum, Args: col("v"), Name: "sv"},
			{Func: AggAvg, Args: col("f"), Name: "af"},
			{Func: AggSum, Args: col("f"), Name: "sf"},
			{Func: AggMin, Args: col("v"), Name: "minv"},
			{Func: AggMax, Args: col("f"), Name: "maxf"},
			{Func: AggMax, Args: col("s"), Name: "maxs"},
		},
	}
	// GROUP BY k1, k2 groups by words (wordsGrouper); k1, s and s alone
	// by key bytes (bytesGrouper).
	keySets := map[string][]NamedExpr{
		"k1,k2": spec.GroupBy,
		"k1,s":  {{Name: "k1", Expr: Col("k1")}, {Name: "s", Expr: Col("s")}},
		"s":     {{Name: "s", Expr: Col("s")}},
	}
	for _, keys := range []string{"k1,k2", "k1,s", "s"} {
		for seed := range uint64(12) {
			testLiveCompactInPlace(t, keys, seed, spec, keySets[keys])
		}
	}
}

func testLiveCompactInPlace(t *testing.T, keys string, seed uint64, spec AggregateSpec, groupBy []NamedExpr) {
	ctx := context.Background()
	spec.GroupBy = groupBy
	t.Run(fmt.Sprintf("%s/%d", keys, seed), func(t *testing.T) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		partial, err := PartialSchema(compactRawSchema, spec)
		if err != nil {
			t.Fatal(err)
		}
		inPlace, err := NewLiveAggregate(mem, partial, len(groupBy), spec.Aggregates)
		if err != nil {
			t.Fatal(err)
		}
		defer inPlace.Close()
		rebuilt, err := NewLiveAggregate(mem, partial, len(groupBy), spec.Aggregates)
		if err != nil {
			t.Fatal(err)
		}
		defer rebuilt.Close()
		if _, ok := inPlace.b.grouper.(groupKeeper); !ok {
			t.Fatalf("grouper %T cannot compact in place: the test would not test it", inPlace.b.grouper)
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		compactions := 0
		for step := range 50 {
			raw := compactRawBatch(mem, rng, 1+rng.IntN(200))
			scan, err := NewScan(compactRawSchema, raw)
			raw.Release()
			if err != nil {
				t.Fatal(err)
			}
			ps := spec
			ps.Mode = AggPartial
			op, err := NewHashAggregate(mem, scan, ps)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := Drain(ctx, op)
			op.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				g1, err := inPlace.Merge(ctx, rec)
				if err != nil {
					t.Fatal(err)
				}
				g1 = append([]int32(nil), g1...)
				g2, err := rebuilt.Merge(ctx, rec)
				if err != nil {
					t.Fatal(err)
				}
				for i := range g1 {
					if g1[i] != g2[i] {
						t.Fatalf("step %d row %d: group %d, rebuilt state says %d", step, i, g1[i], g2[i])
					}
				}
				rec.Release()
			}
			switch rng.IntN(3) {
			case 0:
				var del []int32
				for g := range int32(inPlace.NumGroups()) {
					if rng.IntN(2) == 0 {
						del = append(del, g)
					}
				}
				inPlace.Delete(del)
				rebuilt.Delete(del)
			case 1:
				r1, err := inPlace.Compact(ctx)
				if err != nil {
					t.Fatal(err)
				}
				groups := rebuilt.NumGroups()
				live := []int32{}
				for g := range int32(groups) {
					if !rebuilt.IsDead(g) {
						live = append(live, g)
					}
				}
				if err := rebuilt.rebuild(ctx, live); err != nil {
					t.Fatal(err)
				}
				want := make([]int32, groups)
				for i := range want {
					want[i] = -1
				}
				for i, g := range live {
					want[g] = int32(i)
				}
				if fmt.Sprint(r1) != fmt.Sprint(want) {
					t.Fatalf("step %d: remap %v, want %v", step, r1, want)
				}
				compactions++
			}
			if inPlace.NumGroups() != rebuilt.NumGroups() || inPlace.NumLive() != rebuilt.NumLive() {
				t.Fatalf("step %d: %d groups (%d live), rebuilt %d (%d live)", step,
					inPlace.NumGroups(), inPlace.NumLive(), rebuilt.NumGroups(), rebuilt.NumLive())
			}
			all := make([]int32, inPlace.NumGroups())
			for i := range all {
				all[i] = int32(i)
				if inPlace.IsDead(int32(i)) != rebuilt.IsDead(int32(i)) {
					t.Fatalf("step %d: group %d dead %v, rebuilt %v", step, i, inPlace.IsDead(int32(i)), rebuilt.IsDead(int32(i)))
				}
			}
			s1, err := inPlace.State(all)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := rebuilt.State(all)
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(s1, s2) {
				t.Fatalf("step %d: state\n%v\nrebuilt\n%v", step, s1, s2)
			}
			s1.Release()
			s2.Release()
		}
		if compactions == 0 {
			t.Fatal("no compaction happened")
		}
	})
}

// TestLiveCompactKeepsBytesTable runs a window's worth of string-keyed
// groups through a live aggregation, drops nine tenths of them (the window
// closed) and compacts, then brings as many new groups (the next window):
// the bytes grouper and its key arena must be the ones it had, not a
// rebuilt grouper's grown again from empty (its slot array is cut to what
// the survivors need when it is more than four times that, as the words
// grouper's).
func TestLiveCompactKeepsBytesTable(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	spec := AggregateSpec{
		GroupBy:    []NamedExpr{{Name: "s", Expr: Col("s")}},
		Aggregates: []AggregateCall{{Func: AggCountStar, Name: "n"}},
	}
	partial, err := PartialSchema(compactRawSchema, spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLiveAggregate(mem, partial, 1, spec.Aggregates)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	merge := func(lo, hi int) {
		t.Helper()
		b := array.NewRecordBuilder(mem, compactRawSchema)
		defer b.Release()
		for i := lo; i < hi; i++ {
			for c := range 4 {
				b.Field(c).AppendNull()
			}
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("person-%06d", i))
		}
		raw := b.NewRecord()
		scan, err := NewScan(compactRawSchema, raw)
		raw.Release()
		if err != nil {
			t.Fatal(err)
		}
		ps := spec
		ps.Mode = AggPartial
		op, err := NewHashAggregate(mem, scan, ps)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := Drain(ctx, op)
		op.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if _, err := l.Merge(ctx, rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	const window = 2000
	merge(0, window)
	g, ok := l.b.grouper.(*bytesGrouper)
	if !ok {
		t.Fatalf("grouper %T, want a bytes grouper", l.b.grouper)
	}
	del := make([]int32, 0, window)
	for gid := range int32(window * 9 / 10) {
		del = append(del, gid)
	}
	l.Delete(del)
	if _, err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if l.NumGroups() != window/10 {
		t.Fatalf("%d groups after compaction, want %d", l.NumGroups(), window/10)
	}
	table, arena := g.t, cap(g.t.arena)
	merge(window, window+window*9/10)
	if g2, _ := l.b.grouper.(*bytesGrouper); g2 != g || g.t != table || cap(g.t.arena) != arena {
		t.Fatalf("the next window's groups grew another key arena: grouper %p → %p, arena %d → %d bytes",
			g, l.b.grouper, arena, cap(g.t.arena))
	}
}
