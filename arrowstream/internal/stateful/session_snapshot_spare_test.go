package stateful

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// snapshotOf takes a live snapshot of op's decoded sessions for both of
// its two partitions into fresh catchers (op's stores are put back).
func snapshotOf(t *testing.T, op *statefulSessionWindow) []*snapCatcher {
	t.Helper()
	catchers := []*snapCatcher{{}, {}}
	real := op.state.stores
	op.state.stores = []checkpoint.StateStore{catchers[0], catchers[1]}
	defer func() { op.state.stores = real }()
	if err := op.offerDecoded([]bool{true, true}); err != nil {
		t.Fatal(err)
	}
	return catchers
}

// entriesOf reads every entry of the catchers' views (by partition and
// key) and, when release, releases the views.
func entriesOf(t *testing.T, catchers []*snapCatcher, release bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, c := range catchers {
		err := c.view.Entries(context.Background(), func(key, value []byte) error {
			out[fmt.Sprintf("%d/%x", p, key)] = string(value)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if release {
			c.view.Release()
			c.view = nil
		}
	}
	return out
}

// TestSessionSnapshotBuffersReused: a live snapshot of the decoded
// sessions refills the buffers of the last one the maintenance released
// (its keys, bounds, partition lists and value codec) instead of
// allocating a copy of the state's size every time; and a snapshot made
// from reused buffers emits the same entries as one made from fresh
// ones, while an older snapshot still held is not disturbed.
func TestSessionSnapshotBuffersReused(t *testing.T) {
	const gap = 2_000_000
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, 2)
	defer stores.close()
	op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, sessionCountSpec, 1, 1, true, stream.Append)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	epoch := func(id int64, keys int64) {
		var rows [][2]int64
		for k := int64(0); k < keys; k++ {
			// Some keys get a second session, some keys are new.
			rows = append(rows, [2]int64{k + 7*id, id * 10_000_000}, [2]int64{k + 7*id, id*10_000_000 + (k%3)*5_000_000})
		}
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, id, 0, 0, rows, gap)
		releaseRecords(recs)
	}
	// fresh is what a snapshot made from new buffers emits.
	fresh := func() map[string]string {
		kept := op.snapSpare
		op.snapSpare = &sessionSnapSpare{}
		defer func() { op.snapSpare.close(); op.snapSpare = kept }()
		return entriesOf(t, snapshotOf(t, op), true)
	}
	epoch(0, 3000)
	if op.index.dec == nil {
		t.Fatal("the decoded sessions are not in use")
	}

	// The bytes of a snapshot cycle (offer, encode, release): the first
	// allocates its buffers, the next ones refill them. The entries are
	// read by a second snapshot after the measured one.
	cycle := func() (uint64, map[string]string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cs := snapshotOf(t, op)
		for _, c := range cs {
			c.view.(checkpoint.LiveShaper).EntryShape() // the encode
			c.view.Release()
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, entriesOf(t, snapshotOf(t, op), true)
	}
	want := fresh()
	first, got1 := cycle()
	second, got2 := cycle()
	third, got3 := cycle()
	for i, got := range []map[string]string{got1, got2, got3} {
		if !maps.Equal(got, want) {
			t.Fatalf("snapshot %d: %d entries, differ from a fresh snapshot's %d", i+1, len(got), len(want))
		}
	}
	t.Logf("snapshot cycle bytes: %d, %d, %d", first, second, third)
	if limit := first / 2; second > limit || third > limit {
		t.Fatalf("snapshots after the first allocated %d and %d bytes, the first %d: want at most %d", second, third, first, limit)
	}

	// The state grows between snapshots (new keys, by less than a
	// quarter): the kept buffers, replaced once with room to spare, are
	// refilled again after the next growth.
	grown := [2]uint64{}
	for i := range grown {
		var rows [][2]int64
		for k := int64(0); k < 300; k++ {
			rows = append(rows, [2]int64{100_000 + 1_000*int64(i) + k, 1_000_000})
		}
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, int64(1+i), 0, 0, rows, gap)
		releaseRecords(recs)
		want := fresh()
		var got map[string]string
		grown[i], got = cycle()
		if !maps.Equal(got, want) {
			t.Fatalf("snapshot %d of a grown state differs from a fresh one", i+1)
		}
	}
	t.Logf("snapshot cycle bytes after growth: %d, %d", grown[0], grown[1])
	if limit := first / 2; grown[1] > limit {
		t.Fatalf("the snapshot after the state grew again allocated %d bytes, the first %d: want at most %d", grown[1], first, limit)
	}

	// Interleaved with epochs: A is held while B is made (no spare),
	// A's buffers are released and reused by C while B is still held.
	a := snapshotOf(t, op)
	wantA := fresh()
	epoch(3, 3500)
	b := snapshotOf(t, op)
	wantB := fresh()
	if got := entriesOf(t, a, true); !maps.Equal(got, wantA) {
		t.Fatal("snapshot A changed by the epoch after it")
	}
	epoch(4, 2000)
	c := snapshotOf(t, op) // A's buffers
	wantC := fresh()
	if maps.Equal(wantB, wantC) {
		t.Fatal("the epochs did not change the state")
	}
	if got := entriesOf(t, c, false); !maps.Equal(got, wantC) {
		t.Fatalf("snapshot C from reused buffers: %d entries, differ from a fresh snapshot's %d", len(got), len(wantC))
	}
	if got := entriesOf(t, b, true); !maps.Equal(got, wantB) {
		t.Fatal("snapshot B changed by C's reuse of A's buffers")
	}
	// C released after the operator closed: its buffers are dropped.
	op.Close()
	entriesOf(t, c, true)
	if op.snapSpare.snap != nil {
		t.Fatal("a snapshot released after the operator closed was kept")
	}
}
