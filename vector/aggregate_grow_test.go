package vector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestHashAggregateLargeTable: an aggregation into 150K groups (past the
// size from which the table grows interruptibly, in mapped memory) on the
// default allocator counts every group as a brute-force count does, and a
// cancelled one stops with context.Canceled; both end with nothing
// allocated.
func TestHashAggregateLargeTable(t *testing.T) {
	const rows, groups = 400_000, 150_001
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	pool := vector.NewPoolAllocator(checked, 0)
	defer pool.Close()
	for _, mem := range []memory.Allocator{pool, vector.NewDefaultAllocator()} {
		agg := func() *vector.HashAggregate {
			a, err := vector.NewHashAggregate(mem, newGenOp(mem, rows, false), vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{{Name: "k", Expr: vector.Mod(vector.Col("value"), vector.TypedLit(vector.Int64, int64(groups)))}},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		a := agg()
		recs, err := vector.Drain(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, r := range recs {
			k, n := r.Column(0).(*array.Int64), r.Column(1).(*array.Int64)
			for i := range k.Len() {
				want := int64(rows / groups)
				if k.Value(i) < rows%groups {
					want++
				}
				if n.Value(i) != want {
					t.Fatalf("group %d counted %d, want %d", k.Value(i), n.Value(i), want)
				}
				seen++
			}
			r.Release()
		}
		a.Close()
		if seen != groups {
			t.Fatalf("%d groups, want %d", seen, groups)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		a = agg()
		if _, err := a.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled aggregation: %v", err)
		}
		a.Close()
	}
}
