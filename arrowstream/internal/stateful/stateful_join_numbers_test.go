package stateful

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// candidatesOK is candidates for tests whose sides never run out of row
// numbers.
func candidatesOK[K joinKey](lp *joinLivePart[K], fresh [2]*sideRows, keys [2][]K) []*joinPairs[K] {
	segs, err := candidates(lp, fresh, keys)
	if err != nil {
		panic(err)
	}
	return segs
}

// TestJoinRowNumbersExhausted runs a join whose sides never evict with a
// key index of 64 row numbers: the epoch whose rows would pass them, and
// a restart that loads more stored rows than that, fail with an error
// naming the operator, partition and side (errJoinRowNumbers), not a
// panic, and free every buffer.
func TestJoinRowNumbersExhausted(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	const limit = 64
	newOp := func() *joinSnapOp {
		o := newJoinSnapOp(t, mem, "k = k2", "inner", false)
		o.j.maxRowNumbers = limit
		return o
	}
	stores := newOptStores(t, dir, 1, liveSnapOpts(mem, true))
	defer func() { stores.close() }()
	op := newOp()
	defer func() {
		if err := op.Close(); err != nil {
			t.Error(err)
		}
	}()
	run := func(id int64) error {
		t.Helper()
		// 20 rows an epoch, 10 a side, all of one key: stored and never
		// evicted (no watermark).
		var data []vt.Row
		for j := range 20 {
			data = append(data, vt.Row{int64(1), (id*20 + int64(j)) * 1_000_000})
		}
		rec := vt.BuildRecord(mem, liveInSchema, data)
		scan, err := vector.NewScan(liveInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, CheckpointDir: dir, NumPartitions: 1}}
		ep.State = stores.begin(id)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			stores.abort()
			return err
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		releaseRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		op.Committed(stores.commit(ctx))
		return nil
	}
	check := func(err error, what, side string) {
		t.Helper()
		if !errors.Is(err, errJoinRowNumbers) {
			t.Fatalf("%s: %v, want errJoinRowNumbers", what, err)
		}
		msg := err.Error()
		for _, want := range []string{"operator 0", "partition 0", side} {
			if !strings.Contains(msg, want) {
				t.Fatalf("%s: %q does not name %q", what, msg, want)
			}
		}
	}
	var id int64
	var err error
	for ; id < 20; id++ {
		if err = run(id); err != nil {
			break
		}
	}
	if id == 20 {
		t.Fatal("20 epochs of 10 stored rows a side ran with 64 row numbers")
	}
	// The left side's new rows probe the right side first: its pending
	// rows are indexed first.
	check(err, "epoch", "right side")
	committed := id
	// A restart: the stored rows (more than the numbers) fail to load.
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	stores.close()
	stores = newOptStores(t, dir, 1, liveSnapOpts(mem, true))
	op = newOp()
	// The left side is loaded first.
	check(run(committed), "restart", "read left join state")
}

// TestJoinKeyIndexLinksInPages: a side that never evicts, indexed an
// epoch's batch at a time (q4's bids: 400 batches of 250 rows), keeps its
// links in pages that never move: every page but the last is full, a
// page once full is never reallocated (grown as one array by doubling,
// each growth copied it whole: about 2–4 times the links kept were
// allocated), and the links allocated are at most the links kept and
// one page (the first page's doublings while it is small aside).
func TestJoinKeyIndexLinksInPages(t *testing.T) {
	x := newJoinKeyIndex[uint64]()
	var firstFull *int32
	for j := range 400 {
		const n = 250
		b := &joinBatch[uint64]{keys: make([]uint64, n), keyNull: make([]bool, n), end: n}
		for i := range b.keys {
			b.keys[i] = uint64((j*n + i) % 3000)
		}
		if _, err := x.insertRows(b, 0, n); err != nil {
			t.Fatal(err)
		}
		if x.links.len() > linkPage {
			p := &x.links.pages[0][0]
			if firstFull == nil {
				firstFull = p
			} else if p != firstFull {
				t.Fatalf("batch %d: the first full page moved", j)
			}
		}
	}
	if x.links.len() != 400*250 {
		t.Fatalf("%d links, want %d", x.links.len(), 400*250)
	}
	for k, p := range x.links.pages {
		if cap(p) != linkPage || (k < len(x.links.pages)-1 && len(p) != linkPage) {
			t.Fatalf("page %d of %d: len %d cap %d, want full pages of %d", k, len(x.links.pages), len(p), cap(p), linkPage)
		}
	}
	// Every key's chain holds its rows in number order.
	for k := range uint64(3000) {
		s := x.slab.at(x.find(k))
		last := int32(-1)
		for g := s.head; g >= 0; g = x.links.at(g) {
			if g <= last || uint64(g)%3000 != k {
				t.Fatalf("key %d: row %d after %d", k, g, last)
			}
			last = g
		}
	}
}
