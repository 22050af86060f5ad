package vector

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestReserveContext: growing a group table of 300K groups interruptibly
// keeps every key's group; a cancel in the middle of the move leaves the
// table as it was (same slots, same groups), and release returns the
// mapped slots.
func TestReserveContext(t *testing.T) {
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
	if err := tb.reserveContext(newCountdownCtx(3), extra, fixedPos); !errors.Is(err, context.Canceled) {
		t.Fatalf("reserve cancelled after 3 checks: %v", err)
	}
	if len(tb.slots) != before || len(tb.big.maps) != 0 {
		t.Fatalf("a cancelled reserve left %d slots (was %d) and %d big buffers", len(tb.slots), before, len(tb.big.maps))
	}
	got := make([]int32, n)
	probeFixed(tb, keys, got)
	if !slices.Equal(got, want) || tb.n != n {
		t.Fatal("groups changed after a cancelled reserve")
	}
	if err := tb.reserveContext(context.Background(), extra, fixedPos); err != nil {
		t.Fatal(err)
	}
	if len(tb.slots) <= before || (canMap && len(tb.big.maps) != 1) {
		t.Fatalf("reserve left %d slots (was %d), %d big buffers", len(tb.slots), before, len(tb.big.maps))
	}
	probeFixed(tb, keys, got)
	if !slices.Equal(got, want) || tb.n != n {
		t.Fatal("groups changed after growing the table")
	}
	tb.release()
	if len(tb.big.maps) != 0 {
		t.Fatal("release kept the table's big buffers")
	}
}
