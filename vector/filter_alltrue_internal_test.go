package vector

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestFilterAllTruePassesWithoutSelection checks that a batch every row of
// which passes (Nexmark q7's inferred `price IS NOT NULL` over bids without
// nulls, larger than the selection tree takes) is passed on as it is
// without an index per row: the filter's selection scratch stays empty.
// A batch with one null does build its selection.
func TestFilterAllTruePassesWithoutSelection(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: Int64, Nullable: true}}, nil)
	const n = 4 * selTreeMaxRows
	build := func(nullAt int) arrow.Record {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < n; i++ {
			if i == nullAt {
				b.AppendNull()
			} else {
				b.Append(int64(i))
			}
		}
		col := b.NewArray()
		defer col.Release()
		return array.NewRecord(schema, []arrow.Array{col}, n)
	}
	full, holed := build(-1), build(n-1)
	defer full.Release()
	defer holed.Release()
	scan, err := NewScan(schema, full, holed)
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFilter(mem, scan, IsNotNull(Col("x")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	got, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != n || got.Column(0) != full.Column(0) {
		t.Errorf("all-true batch: %d rows (want %d), passed as is: %v", got.NumRows(), n, got.Column(0) == full.Column(0))
	}
	got.Release()
	if cap(f.sel) != 0 {
		t.Errorf("all-true batch built a selection of capacity %d, want none", cap(f.sel))
	}
	got, err = f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != n-1 {
		t.Errorf("batch with a null: %d rows, want %d", got.NumRows(), n-1)
	}
	got.Release()
}

// TestAllTrueMatchesRows checks allTrue against a row-by-row reading of
// masks that are sliced at any offset, with a single false or null row
// anywhere (the first and last rows of the slice and of a 64-bit word
// included).
func TestAllTrueMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + r.Intn(300)
		hole := -1 // the row made false or null, -1: none
		kind := r.Intn(3)
		if kind > 0 {
			switch r.Intn(4) {
			case 0:
				hole = 0
			case 1:
				hole = n - 1
			default:
				hole = r.Intn(n)
			}
		}
		b := array.NewBooleanBuilder(mem)
		for i := 0; i < n; i++ {
			switch {
			case i == hole && kind == 1:
				b.Append(false)
			case i == hole && kind == 2:
				b.AppendNull()
			default:
				b.Append(true)
			}
		}
		whole := b.NewBooleanArray()
		b.Release()
		lo := r.Intn(n)
		hi := lo + r.Intn(n-lo+1)
		sl := array.NewSlice(whole, int64(lo), int64(hi)).(*array.Boolean)
		want := hi > lo
		for i := 0; i < sl.Len(); i++ {
			if sl.IsNull(i) || !sl.Value(i) {
				want = false
			}
		}
		if got := allTrue(sl); got != want {
			t.Fatalf("iter %d: rows %d..%d of %d (hole %d kind %d): allTrue %v, want %v", iter, lo, hi, n, hole, kind, got, want)
		}
		sl.Release()
		whole.Release()
	}
}
