package kafka

import (
	"testing"
	"time"
)

// TestIdleBackoff: the listing backs off only while the ends stay the
// same under the same assignment, up to idleBackoffMax, and any change
// lists at once again.
func TestIdleBackoff(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ends := func(off int64) PartitionOffsets {
		po := PartitionOffsets{}
		po.set("t", 0, off)
		po.set("t", 1, 7)
		return po
	}
	var b idleBackoff
	if _, ok := b.cached(t0, 1); ok {
		t.Fatal("nothing listed yet, but cached")
	}
	b.listed(t0, 1, ends(5))
	if _, ok := b.cached(t0, 1); ok {
		t.Fatal("one listing is no idleness, but cached")
	}
	now := t0
	for i, want := range []time.Duration{20, 40, 80, 100, 100} {
		now = now.Add(time.Millisecond)
		b.listed(now, 1, ends(5))
		if b.wait != want*time.Millisecond {
			t.Fatalf("listing %d: wait %v, want %v ms", i, b.wait, want)
		}
		got, ok := b.cached(now.Add(b.wait-time.Millisecond), 1)
		if !ok || !sameOffsets(got, ends(5)) {
			t.Fatalf("listing %d: within the wait: %v %v", i, got, ok)
		}
		got.set("t", 0, 99) // the caller's copy
		if _, ok := b.cached(now.Add(b.wait), 1); ok {
			t.Fatalf("listing %d: cached after the wait", i)
		}
	}
	if got, _ := b.cached(now, 1); !sameOffsets(got, ends(5)) {
		t.Fatalf("the cache was modified through a returned copy: %v", got)
	}
	// A rebalance lists at once.
	if _, ok := b.cached(now, 2); ok {
		t.Fatal("cached across an assignment change")
	}
	// New data resets the wait.
	b.listed(now, 1, ends(6))
	if _, ok := b.cached(now, 1); ok || b.wait != 0 {
		t.Fatalf("new data: wait %v", b.wait)
	}
	// A listing under another assignment is not idleness either.
	b.listed(now, 1, ends(6))
	b.listed(now, 3, ends(6))
	if b.wait != 0 {
		t.Fatalf("assignment change: wait %v", b.wait)
	}
}
