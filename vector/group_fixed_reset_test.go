package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestLiveResetOneKeyMatchesFresh: a live aggregation grouped by one
// 64-bit key (null keys among them) filled, read and reset many times,
// over fills of very different sizes (its table kept, grown and shrunk),
// gives at every fill the group ids and the state a fresh aggregation of
// the same rows gives, and keeps its table in place (it is not bound
// again at each Reset). The allocator must end at zero.
func TestLiveResetOneKeyMatchesFresh(t *testing.T) {
	ctx := context.Background()
	spec := AggregateSpec{GroupBy: []NamedExpr{{Name: "k1", Expr: Col("k1")}}, Aggregates: []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Args: []Expr{Col("v")}, Name: "sv"},
		{Func: AggMax, Args: []Expr{Col("s")}, Name: "maxs"},
	}}
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			partial, err := PartialSchema(compactRawSchema, spec)
			if err != nil {
				t.Fatal(err)
			}
			reused, err := NewLiveAggregate(mem, partial, 1, spec.Aggregates)
			if err != nil {
				t.Fatal(err)
			}
			defer reused.Close()
			g, ok := reused.b.grouper.(*fixedGrouper)
			if !ok {
				t.Fatalf("grouper %T, want the fixed-key grouper: the test would not test it", reused.b.grouper)
			}
			rng := rand.New(rand.NewPCG(seed, 11))
			for step := range 30 {
				fresh, err := NewLiveAggregate(mem, partial, 1, spec.Aggregates)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range partialBatches(t, mem, rng, spec, 1+rng.IntN(300)) {
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
				if reused.NumGroups() != fresh.NumGroups() {
					t.Fatalf("step %d: %d groups, fresh %d", step, reused.NumGroups(), fresh.NumGroups())
				}
				all := make([]int32, fresh.NumGroups())
				for i := range all {
					all[i] = int32(i)
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
				if err := reused.Reset(); err != nil {
					t.Fatal(err)
				}
				if reused.NumGroups() != 0 {
					t.Fatalf("step %d: %d groups after Reset", step, reused.NumGroups())
				}
				if now, ok := reused.b.grouper.(*fixedGrouper); !ok || now != g {
					t.Fatalf("step %d: Reset bound a new grouper (%T): the table was not kept", step, reused.b.grouper)
				}
			}
		})
	}
}
