package vector

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// distinctKeysScan is n distinct BIGINT keys in 64K-row batches.
func distinctKeysScan(t *testing.T, mem memory.Allocator, n int) *Scan {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: Int64}}, nil)
	var recs []arrow.Record
	for lo := 0; lo < n; lo += 64 << 10 {
		b := array.NewInt64Builder(mem)
		for i := lo; i < min(n, lo+64<<10); i++ {
			b.Append(int64(i) * 7919)
		}
		col := b.NewArray()
		b.Release()
		recs = append(recs, array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())))
		col.Release()
	}
	return NewOwnedScan(schema, recs)
}

// TestAggregateGrowthReservedBeforeMade: the aggregation's slot table asks
// the query's reservation for a growth before making it. Under a limit that
// the next growth would pass, the aggregation fails with the limit's error
// and its table was never grown past what it had reserved (before, the
// table grew, was mapped, faulted and refilled, and only the batch's
// accounting refused it). And a query that fits still runs: at a limit
// equal to the peak reservation of an unlimited run it succeeds.
func TestAggregateGrowthReservedBeforeMade(t *testing.T) {
	const n = 600_000
	run := func(limit int64) (peak int64, groups int, err error, tableBytes, held int64) {
		mem := &limitedAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: limit}
		defer mem.AssertSize(t, 0)
		h, err := NewHashAggregate(mem, distinctKeysScan(t, mem, n), AggregateSpec{
			GroupBy:    []NamedExpr{{Name: "k", Expr: Col("k")}},
			Aggregates: []AggregateCall{{Func: AggCountStar, Name: "n"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		for {
			rec, err2 := h.Next(context.Background())
			if err2 != nil {
				if !errors.Is(err2, io.EOF) {
					err = err2
				}
				break
			}
			groups += int(rec.NumRows())
			rec.Release()
		}
		g := h.bound.grouper.(*fixedGrouper)
		tableBytes = int64(len(g.t.slots)) * int64(unsafe.Sizeof(groupSlot{}))
		return mem.peak, groups, err, tableBytes, h.heap.held
	}
	peak, groups, err, _, _ := run(math.MaxInt64)
	if err != nil || groups != n {
		t.Fatalf("unlimited: %d groups, err %v; want %d groups", groups, err, n)
	}
	if _, groups, err, _, _ := run(peak); err != nil || groups != n {
		t.Fatalf("at the unlimited run's peak reservation %d: %d groups, err %v; want %d groups", peak, groups, err, n)
	}
	for _, limit := range []int64{peak / 2, peak * 3 / 4, peak - 1} {
		_, _, err, tableBytes, held := run(limit)
		if !errors.Is(err, errTestLimit) {
			t.Fatalf("limit %d (peak %d): err %v, want the limit's error", limit, peak, err)
		}
		if tableBytes > held {
			t.Fatalf("limit %d: the slot table holds %d bytes, more than the %d reserved: it grew before asking", limit, tableBytes, held)
		}
	}
}
