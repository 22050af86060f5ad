package stateful

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// viewStore is a state store that asks for a live snapshot and keeps the
// view it is handed (as the stores' maintenance does until it writes
// the snapshot).
type viewStore struct {
	checkpoint.StateStore
	view checkpoint.LiveView
}

func (s *viewStore) WantsLiveSnapshot() bool               { return true }
func (s *viewStore) SetLiveSnapshot(v checkpoint.LiveView) { s.view = v }

// TestLiveViewsCounted: the live snapshot views an operator hands its
// stores' background maintenance count on the table's account while the
// maintenance holds them and are returned when it releases them: a
// deduplication's key list (100K keys; its reservation within 2x of the
// heap the view holds, runtime.ReadMemStats), and an aggregation's
// record snapshot once encoded. Before session 13 neither was counted.
func TestLiveViewsCounted(t *testing.T) {
	const keys = 100_000
	t.Run("dedup", func(t *testing.T) {
		r := &limitedReserver{Allocator: memory.NewGoAllocator(), limit: 1 << 40}
		d, err := newStatefulDedup(r, 0, liveInSchema, []int{0}, -1, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		st := &viewStore{}
		d.state.stores = []checkpoint.StateStore{st}
		part := dedupPart{seen: make(map[string]int64, keys)}
		for i := range keys {
			part.add(binary.LittleEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15), 0, false)
		}
		d.live = &dedupLive{parts: []dedupPart{part}}
		runtime.GC() // the keys' garbage goes before the measure
		measured := heapGrowth(func() any {
			if err := d.offerLive(); err != nil {
				t.Fatal(err)
			}
			return st.view
		})
		held := r.held.Load()
		t.Logf("a view of %d keys: %d bytes reserved, heap %d bytes (%.2fx)", keys, held, measured, float64(held)/float64(measured))
		if st.view == nil {
			t.Fatal("no view handed to the store")
		}
		if held <= 0 || float64(held) > estimateFactor*float64(measured) || float64(held)*estimateFactor < float64(measured) {
			t.Errorf("view reservation %d bytes against %d measured: off by more than %.1fx", held, measured, estimateFactor)
		}
		if len(r.ops) < 2 || r.ops[1] != "live snapshot views of deduplication state (dedupe)" {
			t.Errorf("reserved as %v, want the views named", r.ops)
		}
		runtime.KeepAlive(d) // its keys' map stays through the measure
		st.view.Release()
		st.view.Release() // once only
		if r.held.Load() != 0 {
			t.Errorf("after the view's release %d bytes stay reserved", r.held.Load())
		}
	})
	t.Run("aggregation_record", func(t *testing.T) {
		mem := memory.NewGoAllocator()
		r := &limitedReserver{Allocator: mem, limit: 1 << 40}
		rows := make([]vt.Row, keys)
		for i := range rows {
			rows[i] = vt.Row{int64(i), int64(i) * 1000}
		}
		rec := vt.BuildRecord(mem, liveInSchema, rows)
		key, err := newRowCodec(mem, liveInSchema, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		val, err := newValueCodec(mem, liveInSchema, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		stores := []checkpoint.StateStore{&viewStore{}, &viewStore{}}
		offerRecordSnapshot(stores, []bool{true, true}, rec, key, val, partitionKeyEncoder, newViewAccount(r, aggStateName))
		n := 0
		for _, st := range stores {
			if err := st.(*viewStore).view.Entries(context.Background(), func(_, _ []byte) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		held := r.held.Load()
		// Two encoders of 8-byte words (hashes, words, offsets) and the
		// partitions' row lists: at least 20 bytes a row.
		t.Logf("%d rows encoded (%d emitted): %d bytes reserved", keys, n, held)
		if n != keys || held < 20*keys {
			t.Errorf("%d rows emitted, %d bytes reserved; want %d rows and at least %d bytes", n, held, keys, 20*keys)
		}
		stores[0].(*viewStore).view.Release()
		if r.held.Load() != held {
			t.Errorf("the first view's release returned the shared encoding's reservation (%d left of %d)", r.held.Load(), held)
		}
		stores[1].(*viewStore).view.Release()
		if r.held.Load() != 0 {
			t.Errorf("after the last view's release %d bytes stay reserved", r.held.Load())
		}
	})
	t.Run("join", func(t *testing.T) {
		// A left outer join keeps matched flags: its views carry meta
		// entries besides the batches' headers.
		mem := memory.NewGoAllocator()
		r := &limitedReserver{Allocator: mem, limit: 1 << 40}
		ctx := context.Background()
		dir := t.TempDir()
		stores := newTestStores(t, mem, dir, 2)
		defer stores.close()
		op := newJoinSnapOp(t, r, "k = k2", "left", false)
		op.mem = mem
		defer op.j.Close()
		data := make([]vt.Row, keys)
		for i := range data {
			data[i] = vt.Row{int64(i), int64(i) * 1000}
		}
		rec := vt.BuildRecord(mem, liveInSchema, data)
		scan, err := vector.NewScan(liveInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{}
		ep.ID, ep.CheckpointDir, ep.NumPartitions = 0, dir, 2
		ep.State = stores.begin(0)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		releaseRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		op.Committed(stores.commit(ctx))
		before := r.held.Load()
		views := []*viewStore{{}, {}}
		op.j.state.stores = []checkpoint.StateStore{views[0], views[1]}
		op.j.log = true
		op.j.offerLive()
		offered := r.held.Load() - before
		n := 0
		for _, st := range views {
			if st.view == nil {
				t.Fatal("no view handed to a store")
			}
			if err := st.view.Entries(ctx, func(_, _ []byte) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		encoded := r.held.Load() - before
		t.Logf("join views of %d rows (%d entries): %d bytes reserved when offered, %d with the encode scratch", keys, n, offered, encoded)
		if offered <= 0 || encoded <= offered {
			t.Errorf("join views reserved %d bytes when offered, %d once encoded: want both counted", offered, encoded)
		}
		if !slices.Contains(r.ops, "live snapshot views of stream-stream join state") {
			t.Errorf("reserved as %v, want the views named", r.ops)
		}
		for _, st := range views {
			st.view.Release()
			st.view.Release() // once only
		}
		if got := r.held.Load() - before; got != 0 {
			t.Errorf("after the views' release %d bytes stay reserved", got)
		}
		op.j.state.stores = nil
	})
}
