package vector

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestWordsGrowContext: the multi-key grouper (GROUP BY a, b) grows its
// slot table, tuples and row counts interruptibly. A cancel in the middle
// of a growth stops the batch with the cancellation and leaves every
// group made before it where it was; uncancelled, the same batch gives
// every row the group a plain grouper gives it, and release returns the
// mapped slots.
func TestWordsGrowContext(t *testing.T) {
	pool := NewDefaultAllocator()
	defer pool.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32}
	cols := func(lo, n int) []arrow.Array {
		a := array.NewInt64Builder(mem)
		b := array.NewInt32Builder(mem)
		defer a.Release()
		defer b.Release()
		for i := lo; i < lo+n; i++ {
			a.Append(int64(uint64(i) * 0x9e3779b97f4a7c15))
			b.Append(int32(i % 7))
		}
		return []arrow.Array{a.NewArray(), b.NewArray()}
	}
	release := func(a []arrow.Array) {
		for _, x := range a {
			x.Release()
		}
	}
	const n = 300_000
	first := cols(0, n)
	defer release(first)

	g, err := newGrouper(pool, types)
	if err != nil {
		t.Fatal(err)
	}
	wg, ok := g.(*wordsGrouper)
	if !ok {
		t.Fatalf("GROUP BY bigint, int uses a %T, want the words grouper", g)
	}
	want := make([]int32, n)
	if err := wg.groupContext(context.Background(), first, want); err != nil {
		t.Fatal(err)
	}
	slotsBefore, groupsBefore := len(wg.slots), wg.numGroups()
	more := cols(n, slotsBefore) // enough new groups to force a doubling
	defer release(more)
	moreGids := make([]int32, slotsBefore)
	// Room for the new tuples and counts, so that the step the cancel
	// lands in is the table's doubling.
	wg.tuples = slices.Grow(wg.tuples, (n+slotsBefore)*wg.k)
	wg.rows = slices.Grow(wg.rows, n+slotsBefore)

	err = wg.groupContext(newCountdownCtx(2), more, moreGids)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("growth cancelled after 2 checks: %v", err)
	}
	if len(wg.slots) != slotsBefore || len(wg.big.maps) > 1 {
		t.Fatalf("a cancelled growth left %d slots (was %d) and %d mapped tables", len(wg.slots), slotsBefore, len(wg.big.maps))
	}
	got := make([]int32, n)
	if err := wg.group(first, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatal("groups of earlier keys changed after a cancelled growth")
	}
	if wg.numGroups() < groupsBefore {
		t.Fatalf("%d groups after a cancelled growth, had %d", wg.numGroups(), groupsBefore)
	}

	// The same keys, uncancelled, on a fresh grouper and on a plain one.
	fresh, err := newGrouper(pool, types)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.release()
	fw := fresh.(*wordsGrouper)
	plain := newWordsGrouper(types)
	for _, batch := range [][]arrow.Array{first, more} {
		a := make([]int32, batch[0].Len())
		b := make([]int32, batch[0].Len())
		if err := fw.groupContext(context.Background(), batch, a); err != nil {
			t.Fatal(err)
		}
		if err := plain.group(batch, b); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Fatal("interruptible growth gave other groups than the plain grouper")
		}
	}
	if len(fw.slots) <= slotsBefore {
		t.Fatalf("table of %d slots did not grow past %d", len(fw.slots), slotsBefore)
	}
	if !slices.Equal(fw.finish(), plain.finish()) {
		t.Fatal("row counts differ from the plain grouper's")
	}
	wg.release()
	if len(wg.big.maps) != 0 {
		t.Fatal("release kept the grouper's mapped slots")
	}
}
