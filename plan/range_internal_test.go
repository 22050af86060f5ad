package plan

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestRangeCount checks the up-front row count of range() against
// stepping through the values, and that extreme bounds neither overflow
// nor get built before they are refused.
func TestRangeCount(t *testing.T) {
	brute := func(start, end, step int64) int {
		n := 0
		for v := start; step > 0 && v < end || step < 0 && v > end; v += step {
			n++
			if next := v + step; step > 0 && next < v || step < 0 && next > v {
				break
			}
		}
		return n
	}
	for _, c := range [][3]int64{
		{0, 10, 1}, {0, 10, 3}, {10, 0, -3}, {5, 5, 1}, {5, 0, 1}, {0, 5, -1},
		{math.MinInt64, math.MinInt64 + 7, 2}, {math.MaxInt64 - 7, math.MaxInt64, 3},
		{math.MaxInt64, math.MaxInt64 - 9, -4}, {math.MinInt64, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, math.MinInt64, math.MinInt64}, {-3, 3, math.MaxInt64},
	} {
		got, ok := rangeCount(c[0], c[1], c[2])
		if want := brute(c[0], c[1], c[2]); !ok || got != want {
			t.Errorf("rangeCount%v = %d, %v; want %d", c, got, ok, want)
		}
	}
	// Counts past what an int64 holds are refused: 2^64 - 1 and 2^63.
	for _, c := range [][3]int64{{math.MinInt64, math.MaxInt64, 1}, {math.MinInt64, math.MaxInt64, 2}, {math.MaxInt64, math.MinInt64, -2}} {
		if _, ok := rangeCount(c[0], c[1], c[2]); ok {
			t.Errorf("rangeCount%v accepted", c)
		}
	}
	// Large counts are computed, not stepped through.
	for _, c := range []struct {
		start, end, step int64
		want             int
	}{
		{0, math.MaxInt64, 1, math.MaxInt64},
		{6, 236852036854775807, 5, 47370407370955161},
		{math.MinInt64, math.MaxInt64, 3, 6148914691236517205},
		{math.MinInt64 + 1, math.MaxInt64, 2, math.MaxInt64},
	} {
		if n, ok := rangeCount(c.start, c.end, c.step); !ok || n != c.want {
			t.Errorf("rangeCount(%d, %d, %d) = %d, %v; want %d", c.start, c.end, c.step, n, ok, c.want)
		}
	}
}

// TestRangeLongStopsOnCancel: a range of 2^63 - 1 rows is made batch by
// batch, so it stops at the query's cancel (or timeout) with its batches
// released, instead of running on or being built up front.
func TestRangeLongStopsOnCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	n, ok := rangeCount(0, math.MaxInt64, 1)
	if !ok {
		t.Fatal("range(0, 2^63 - 1) refused")
	}
	op := newRangeOp(mem, newRange(0, 1, n))
	defer op.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var want int64
	for b := 0; ; b++ {
		if b == 3 {
			cancel()
		}
		rec, err := op.Next(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) || b != 3 {
				t.Fatalf("batch %d: %v, want the cancel at batch 3", b, err)
			}
			return
		}
		if b >= 3 {
			rec.Release()
			t.Fatalf("batch %d made after the cancel", b)
		}
		ids := rec.Column(0).(*array.Int64).Int64Values()
		if len(ids) != rangeBatchRows || ids[0] != want || ids[len(ids)-1] != want+rangeBatchRows-1 {
			t.Fatalf("batch %d: %d rows from %d", b, len(ids), ids[0])
		}
		want += rangeBatchRows
		rec.Release()
	}
}
