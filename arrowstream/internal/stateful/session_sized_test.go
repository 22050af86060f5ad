package stateful

import (
	"context"
	"runtime"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestSessionNewKeyAllocs: a key new to the decoded sessions costs one Go
// allocation (its entry, holding its first session and its fixed-width
// key's bytes), not an entry, a key string and a session list. Measured
// as the slope of an epoch's allocations between 1,000 and 4,000 new
// keys (two rows each, one session), so that the epoch's fixed work
// cancels; the map's and the scratch's growth are amortized into it.
func TestSessionNewKeyAllocs(t *testing.T) {
	const gap = 2_000_000 // µs
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
	next := int64(0)
	epoch := func(id int64, keys int) uint64 {
		var rows [][2]int64
		for k := 0; k < keys; k++ {
			rows = append(rows, [2]int64{next, id * 10_000_000}, [2]int64{next, id*10_000_000 + 1_000_000})
			next++
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, id, 0, 0, rows, gap)
		runtime.ReadMemStats(&after)
		releaseRecords(recs)
		return after.Mallocs - before.Mallocs
	}
	epoch(0, 4000) // the first epoch's layout and scratch
	if op.index.dec == nil {
		t.Fatal("the decoded sessions are not in use")
	}
	small := epoch(1, 1000)
	large := epoch(2, 4000)
	perKey := float64(int64(large)-int64(small)) / 3000
	t.Logf("%d allocations for 1,000 new keys, %d for 4,000: %.2f per new key", small, large, perKey)
	if perKey > 1.5 {
		t.Fatalf("%.2f allocations per new key, want at most 1.5", perKey)
	}
}

// TestSessionSnapshotEntryBytes: a partition's view of a live snapshot
// sizes its entries (checkpoint.LiveSizer), exactly the key and value
// bytes its Entries emits, so that the snapshot's body is allocated once,
// and its shape (checkpoint.LiveShaper: entries, key and value bytes), so
// that the encode's arena is too.
func TestSessionSnapshotEntryBytes(t *testing.T) {
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
	for id := int64(0); id < 3; id++ {
		var rows [][2]int64
		for k := int64(0); k < 300+100*id; k++ {
			// Some keys get a second session (more than one per value).
			rows = append(rows, [2]int64{k, id * 10_000_000}, [2]int64{k, id*10_000_000 + (k%3)*5_000_000})
		}
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, id, 0, 0, rows, gap)
		releaseRecords(recs)
	}
	catchers := []*snapCatcher{{}, {}}
	op.state.stores = []checkpoint.StateStore{catchers[0], catchers[1]}
	defer func() {
		for _, c := range catchers {
			if c.view != nil {
				c.view.Release()
			}
		}
	}()
	if err := op.offerDecoded([]bool{true, true}); err != nil {
		t.Fatal(err)
	}
	for p, c := range catchers {
		sz, ok := c.view.(checkpoint.LiveSizer)
		if !ok {
			t.Fatalf("partition %d: the session snapshot's view (%T) does not size its entries", p, c.view)
		}
		est := sz.EntryBytes()
		shaper, ok := c.view.(checkpoint.LiveShaper)
		if !ok {
			t.Fatalf("partition %d: the session snapshot's view (%T) does not tell its shape", p, c.view)
		}
		n, kb, vb := shaper.EntryShape()
		var got, gotKeys int64
		entries := 0
		err := c.view.Entries(context.Background(), func(key, value []byte) error {
			got += int64(len(key) + len(value))
			gotKeys += int64(len(key))
			entries++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if entries == 0 || est != got {
			t.Fatalf("partition %d: EntryBytes %d, the %d entries emitted %d bytes", p, est, entries, got)
		}
		if n != entries || kb != gotKeys || kb+vb != got {
			t.Fatalf("partition %d: EntryShape %d entries, %d key and %d value bytes; emitted %d, %d and %d", p, n, kb, vb, entries, gotKeys, got-gotKeys)
		}
	}
}

// TestSessionNumberKeysEncodesFirstRows: the merge's key numbering
// encodes (and hashes for a partition) only the rows that bring a key
// into the epoch, gathered, not every row of the batch.
func TestSessionNumberKeysEncodesFirstRows(t *testing.T) {
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
	const keys, perKey = 50, 40
	for id := int64(0); id < 2; id++ {
		var rows [][2]int64
		for r := int64(0); r < keys*perKey; r++ {
			rows = append(rows, [2]int64{(r * 7) % keys, id*10_000_000 + r})
		}
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, id, 0, 0, rows, gap)
		releaseRecords(recs)
		if n := op.keyCodec.enc.Len(); n != keys {
			t.Fatalf("epoch %d: the key codec encoded %d rows, want the %d keys' first rows", id, n, keys)
		}
		if n := op.index.dec.numKeys(); n != keys {
			t.Fatalf("epoch %d: %d keys with sessions, want %d", id, n, keys)
		}
	}
}
