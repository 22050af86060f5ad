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

// partialBatches returns the partial rows of n random raw rows of
// compactRawSchema under spec.
func partialBatches(t *testing.T, mem memory.Allocator, rng *rand.Rand, spec AggregateSpec, n int) []arrow.Record {
	t.Helper()
	raw := compactRawBatch(mem, rng, n)
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
	defer op.Close()
	recs, err := Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestLiveResetMatchesFresh fills one live aggregation, reads it and
// resets it, many times over fills of very different sizes (so that its
// table is kept, grown and shrunk), with groups deleted before some
// resets; every fill must give the group ids and the state a fresh
// aggregation of the same rows gives. One spec keeps its structures in
// place (count, sum, min/max), the other has an accumulator that cannot
// and is rebound. The allocator must end at zero.
func TestLiveResetMatchesFresh(t *testing.T) {
	ctx := context.Background()
	col := func(name string) []Expr { return []Expr{Col(name)} }
	keys := []NamedExpr{{Name: "k1", Expr: Col("k1")}, {Name: "k2", Expr: Col("k2")}}
	specs := map[string]AggregateSpec{
		"in place": {GroupBy: keys, Aggregates: []AggregateCall{
			{Func: AggCountStar, Name: "n"},
			{Func: AggSum, Args: col("v"), Name: "sv"},
			{Func: AggAvg, Args: col("f"), Name: "af"},
			{Func: AggMin, Args: col("v"), Name: "minv"},
			{Func: AggMax, Args: col("s"), Name: "maxs"},
		}},
		"rebound": {GroupBy: keys, Aggregates: []AggregateCall{
			{Func: AggCountStar, Name: "n"},
			{Func: AggFirst, Args: col("v"), Name: "fv"},
		}},
	}
	for name, spec := range specs {
		for seed := range uint64(6) {
			t.Run(fmt.Sprint(name, "/", seed), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				partial, err := PartialSchema(compactRawSchema, spec)
				if err != nil {
					t.Fatal(err)
				}
				reused, err := NewLiveAggregate(mem, partial, 2, spec.Aggregates)
				if err != nil {
					t.Fatal(err)
				}
				defer reused.Close()
				if _, ok := reused.b.grouper.(groupResetter); !ok {
					t.Fatalf("grouper %T cannot reset in place: the test would not test it", reused.b.grouper)
				}
				rng := rand.New(rand.NewPCG(seed, 5))
				for step := range 30 {
					fresh, err := NewLiveAggregate(mem, partial, 2, spec.Aggregates)
					if err != nil {
						t.Fatal(err)
					}
					// The key domain is small; a wide one (k1 up to
					// thousands) makes some fills large.
					n := 1 + rng.IntN(300)
					for _, rec := range partialBatches(t, mem, rng, spec, n) {
						if rng.IntN(3) == 0 {
							rec = widenKeys(t, mem, rng, rec)
						}
						g1, err := reused.Merge(ctx, rec)
						if err != nil {
							t.Fatal(err)
						}
						g1 = append([]int32(nil), g1...)
						g2, err := fresh.Merge(ctx, rec)
						if err != nil {
							t.Fatal(err)
						}
						rec.Release()
						if fmt.Sprint(g1) != fmt.Sprint(g2) {
							t.Fatalf("step %d: groups %v, a fresh aggregation %v", step, g1, g2)
						}
					}
					all := make([]int32, fresh.NumGroups())
					for i := range all {
						all[i] = int32(i)
					}
					if reused.NumGroups() != fresh.NumGroups() {
						t.Fatalf("step %d: %d groups, fresh %d", step, reused.NumGroups(), fresh.NumGroups())
					}
					s1, err := reused.State(all)
					if err != nil {
						t.Fatal(err)
					}
					s2, err := fresh.State(all)
					if err != nil {
						t.Fatal(err)
					}
					if !array.RecordEqual(s1, s2) {
						t.Fatalf("step %d: state\n%v\nfresh\n%v", step, s1, s2)
					}
					s1.Release()
					s2.Release()
					fresh.Close()
					if rng.IntN(3) == 0 {
						reused.Delete(all[:len(all)/2])
					}
					if err := reused.Reset(); err != nil {
						t.Fatal(err)
					}
					if reused.NumGroups() != 0 || reused.NumLive() != 0 {
						t.Fatalf("step %d: %d groups (%d live) after Reset", step, reused.NumGroups(), reused.NumLive())
					}
				}
			})
		}
	}
}

// widenKeys returns rec (released) with its k1 keys spread over a wide
// domain, so that a fill has thousands of groups.
func widenKeys(t *testing.T, mem memory.Allocator, rng *rand.Rand, rec arrow.Record) arrow.Record {
	t.Helper()
	defer rec.Release()
	old := rec.Column(0).(*array.Int64)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range old.Len() {
		if old.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(old.Value(i)*1000 + rng.Int64N(1000))
	}
	k1 := b.NewArray()
	defer k1.Release()
	cols := append([]arrow.Array{k1}, rec.Columns()[1:]...)
	return array.NewRecord(rec.Schema(), cols, rec.NumRows())
}
