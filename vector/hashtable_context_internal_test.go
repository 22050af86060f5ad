package vector

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestGrowContext: growing a group table of 300K groups interruptibly
// keeps every key's group; a cancel in the middle of the move leaves the
// table as it was (same slots, same groups) and stops the probe with the
// cancellation, and release returns the mapped slots.
func TestGrowContext(t *testing.T) {
	pool := NewDefaultAllocator()
	defer pool.Close()
	const n = 300_000
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(uint64(i) * 0x9e3779b97f4a7c15)
	}
	tb := newFixedTable()
	tb.big = newBigMem(pool)
	want := make([]int32, n)
	probeFixed(tb, keys, want)
	if tb.n != n {
		t.Fatalf("%d groups, want %d", tb.n, n)
	}
	before := len(tb.slots)
	extra := before // enough to force a doubling
	more := make([]int64, extra)
	for i := range more {
		more[i] = int64(n + i)
	}
	moreGids := make([]int32, extra)
	err := tb.withContext(newCountdownCtx(3), func() error { probeFixed(tb, more, moreGids); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("growth cancelled after 3 checks: %v", err)
	}
	if len(tb.slots) != before || len(tb.big.maps) != 0 {
		t.Fatalf("a cancelled reserve left %d slots (was %d) and %d big buffers", len(tb.slots), before, len(tb.big.maps))
	}
	got := make([]int32, n)
	probeFixed(tb, keys, got)
	if !slices.Equal(got, want) {
		t.Fatal("groups changed after a cancelled growth")
	}
	grown := tb.n
	if err := tb.withContext(context.Background(), func() error { probeFixed(tb, more, moreGids); return nil }); err != nil {
		t.Fatal(err)
	}
	if tb.n != n+extra {
		t.Fatalf("%d groups after adding %d to %d (%d before the growth)", tb.n, extra, n, grown)
	}
	if len(tb.slots) <= before || (canMap && len(tb.big.maps) != 1) {
		t.Fatalf("reserve left %d slots (was %d), %d big buffers", len(tb.slots), before, len(tb.big.maps))
	}
	probeFixed(tb, keys, got)
	if !slices.Equal(got, want) {
		t.Fatal("groups changed after growing the table")
	}
	tb.release()
	if len(tb.big.maps) != 0 {
		t.Fatal("release kept the table's big buffers")
	}
}
