package vector_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestLargeBuffersThroughPool: a join with a 300K-row build side and a sort
// of 300K rows (whose tables and scratch are large buffers) give the same
// results on a pool, which then keeps their buffers for the next query,
// as on a checked allocator without one (where they are mapped and
// unmapped); both end with nothing allocated.
func TestLargeBuffersThroughPool(t *testing.T) {
	const n = 300_000
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	pool := vector.NewPoolAllocator(checked, 0)
	defer pool.Close()
	type run struct {
		name string
		mem  memory.Allocator
	}
	join := func(mem memory.Allocator) int64 {
		left, right := newGenOp(mem, n, true), newGenOp(mem, n, true)
		j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{Type: vector.InnerJoin,
			LeftKeys: []vector.Expr{vector.Col("value")}, RightKeys: []vector.Expr{vector.Col("value")}})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		var rows int64
		for {
			rec, err := j.Next(context.Background())
			if errors.Is(err, io.EOF) {
				return rows
			}
			if err != nil {
				t.Fatal(err)
			}
			rows += rec.NumRows()
			rec.Release()
		}
	}
	sortFirstLast := func(mem memory.Allocator) (first, last int64) {
		s, err := vector.NewSort(mem, newGenOp(mem, n, true), []vector.SortKey{vector.Desc(vector.Col("value"))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		prev, rows := int64(0), 0
		for {
			rec, err := s.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
				if rows == 0 {
					first = v
				} else if v > prev {
					t.Fatalf("row %d: %d after %d in a descending sort", rows, v, prev)
				}
				prev = v
				rows++
			}
			rec.Release()
		}
		if rows != n {
			t.Fatalf("sort returned %d rows, want %d", rows, n)
		}
		return first, prev
	}
	var wantFirst, wantLast int64
	for i, r := range []run{{"checked", checked}, {"pool", pool}, {"pool again", pool}} {
		if got := join(r.mem); got != n {
			t.Fatalf("%s: join of %d distinct keys with themselves gave %d rows", r.name, n, got)
		}
		first, last := sortFirstLast(r.mem)
		if i == 0 {
			wantFirst, wantLast = first, last
		} else if first != wantFirst || last != wantLast {
			t.Fatalf("%s: sort gave %d..%d, want %d..%d", r.name, first, last, wantFirst, wantLast)
		}
		if r.mem == pool && pool.RetainedLarge() == 0 {
			t.Fatalf("%s: the pool kept none of the large buffers", r.name)
		}
	}
}
