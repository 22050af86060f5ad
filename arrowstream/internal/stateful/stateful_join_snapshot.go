package stateful

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Snapshots of the stream-stream join's state from its live batches
// (checkpoint.LiveSnapshotter, live_snapshot.go). Without them a
// partition's snapshot was folded from the files: the newest snapshot
// read back and every delta since applied to a map of entries, each
// batch's Arrow IPC bytes copied into the map and out again (Nexmark q20
// spent about a third of its engine CPU there). Yet at the end of an
// epoch the live batches are exactly the entries the store holds
// (stateful_join_store.go): one batch entry per stored batch, its rows as
// an Arrow IPC stream, and one meta entry with its cursor and matched
// flags. So an epoch whose commit makes a snapshot due hands the
// partition a view of them: the batches' records retained (immutable:
// eviction moves a cursor, compaction and merges make new records) and
// the meta entries rendered (a few bytes per batch); the view's IPC
// encoding runs on the stores' maintenance goroutine.
//
// A batch merged in memory from several stored ones (stateful_join_merge.go)
// keeps the list of the entries it is made of (pieces): the view writes
// each as its slice of the merged rows, so the snapshot holds the same
// entries a fold would, each with the same rows. The view is offered only
// when the entries it would write are as many as the side counts in the
// store; otherwise (an entry the live state does not hold, as a batch
// loaded fully evicted) the snapshot is folded as before.

// joinPiece is a stored batch whose rows a merged live batch holds: its
// id, its row count, and whether the store holds a meta entry for it
// (one of a batch that could be merged: cursor 0, no matched flags).
type joinPiece struct {
	id   uint64
	rows int32
	meta bool
}

// storedPieces returns the store entries b's rows are, in row order.
func (b *joinBatch[K]) storedPieces() []joinPiece {
	if b.pieces != nil {
		return b.pieces
	}
	return []joinPiece{{id: b.id, rows: b.end - b.base, meta: b.storedMeta}}
}

// emptyJoinMeta is the meta entry of a batch with cursor 0 and no matched
// flags (encodeJoinMeta's).
var emptyJoinMeta = []byte{0, 0, 0, 0, 0}

// joinViewRows is a batch entry of a view: rows [off, off+n) of rec.
type joinViewRows struct {
	key    []byte
	rec    arrow.Record
	off, n int64
	// sel: the rows are rows sel of rec (a batch that views its input,
	// stateful_join_view.go; off and n then 0 and len(sel)).
	sel []int32
}

// record returns the entry's rows as a record of their own: rec itself,
// a slice of it, or its rows gathered through sel. release frees it.
func (r joinViewRows) record(mem memory.Allocator) (rec arrow.Record, release func(), err error) {
	switch {
	case r.sel != nil:
		rec, err = gatherSel(mem, r.rec, r.sel)
		if err != nil {
			return nil, nil, err
		}
		return rec, rec.Release, nil
	case r.off != 0 || r.n != r.rec.NumRows():
		rec = r.rec.NewSlice(r.off, r.off+r.n)
		return rec, rec.Release, nil
	}
	return r.rec, func() {}, nil
}

// joinView is one partition's join state at one version.
type joinView struct {
	mem   memory.Allocator
	rows  []joinViewRows
	metas [][2][]byte // key, value
	done  atomic.Bool
	// hold reserves the view's Go-heap bytes (its entries' headers and
	// keys, the meta entries, the encode scratch) while the maintenance
	// holds it; the records' Arrow buffers count through the allocator.
	hold *viewHold
}

// heapBytes is the view's Go-heap bytes besides its encode scratch.
func (v *joinView) heapBytes() int64 {
	n := int64(unsafe.Sizeof(*v)) + int64(cap(v.rows))*int64(unsafe.Sizeof(joinViewRows{})) + int64(cap(v.metas))*int64(unsafe.Sizeof([2][]byte{}))
	for _, r := range v.rows {
		n += int64(len(r.key))
	}
	for _, m := range v.metas {
		n += int64(len(m[0]) + len(m[1]))
	}
	return n
}

// addSide adds the entries of side tag's live batches and reports how
// many it added.
func addJoinSideView[K joinKey](v *joinView, side *joinSideLive[K], tag byte) int64 {
	var n int64
	for _, b := range side.batches {
		if b.rec == nil {
			continue
		}
		if b.pieces == nil {
			if b.storedRec {
				b.rec.Retain()
				v.rows = append(v.rows, joinViewRows{key: joinStoreKey(joinBatchTag, tag, b.id), rec: b.rec, n: b.rec.NumRows(), sel: b.sel})
				if b.sel != nil {
					v.rows[len(v.rows)-1].n = int64(len(b.sel))
				}
				n++
			}
			if b.storedMeta {
				v.metas = append(v.metas, [2][]byte{joinStoreKey(joinMetaTag, tag, b.id), encodeJoinMeta(b)})
				n++
			}
			continue
		}
		var off int64
		for _, pc := range b.pieces {
			b.rec.Retain()
			v.rows = append(v.rows, joinViewRows{key: joinStoreKey(joinBatchTag, tag, pc.id), rec: b.rec, off: off, n: int64(pc.rows)})
			n++
			if pc.meta {
				v.metas = append(v.metas, [2][]byte{joinStoreKey(joinMetaTag, tag, pc.id), emptyJoinMeta})
				n++
			}
			off += int64(pc.rows)
		}
	}
	return n
}

// joinPartView returns a view of partition lp's state, or nil when it
// would not hold every entry its sides count in the store.
func joinPartView[K joinKey](mem memory.Allocator, lp *joinLivePart[K]) *joinView {
	v := &joinView{mem: mem}
	for i, side := range lp.sides {
		if side == nil || addJoinSideView(v, side, byte(i)) != side.entries {
			v.Release()
			return nil
		}
	}
	return v
}

// offerLive hands the partitions whose commit makes a snapshot due a view
// of their live batches as the epoch leaves them.
func (s *statefulJoin) offerLive() {
	if !s.log {
		return
	}
	for p, w := range wantsLive(s.state.stores) {
		if !w {
			continue
		}
		var v *joinView
		switch jp := s.parts[p]; {
		case jp.words != nil:
			v = joinPartView(s.mem, jp.words)
		case jp.strs != nil:
			v = joinPartView(s.mem, jp.strs)
		}
		if v == nil {
			continue
		}
		hold, err := s.views.hold(v.heapBytes())
		if err != nil {
			// Refused (the limit stops the query): the snapshot is
			// folded from the files, as without a view.
			v.Release()
			continue
		}
		v.hold = hold
		s.state.stores[p].(checkpoint.LiveSnapshotter).SetLiveSnapshot(v)
	}
}

// viewEncoders are the encoders of one snapshot, one per schema (by
// pointer), started at their schema's first batch: a fresh ipc.Writer per
// batch built and dropped the schema's message every time.
type viewEncoders []*ipcStreamEncoder

func (v *viewEncoders) of(mem memory.Allocator, schema *arrow.Schema) (*ipcStreamEncoder, error) {
	for _, e := range *v {
		if e.schema == schema {
			return e, nil
		}
	}
	e, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		return nil, err
	}
	*v = append(*v, e)
	return e, nil
}

// Entries implements checkpoint.LiveView: the meta entries, then each
// batch entry encoded as the operator would have logged it, into one
// reused buffer (the store copies what emit gives it).
func (v *joinView) Entries(ctx context.Context, emit func(key, value []byte) error) error {
	for _, m := range v.metas {
		if err := emit(m[0], m[1]); err != nil {
			return err
		}
	}
	var scratch []byte
	var encs viewEncoders
	for _, r := range v.rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, done, err := r.record(v.mem)
		if err != nil {
			return fmt.Errorf("arrowstream: gather join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
		}
		// The space is kept whatever its size: it lives for this call,
		// reserved with the view.
		had := cap(scratch)
		var raw []byte
		enc, err := encs.of(v.mem, rec.Schema())
		if err == nil {
			raw, err = encodeJoinRecordWith(enc, rec, &scratch, math.MaxInt)
		}
		if err == nil && cap(scratch) > had {
			err = v.hold.add(int64(cap(scratch) - had))
		}
		done()
		if err != nil {
			return fmt.Errorf("arrowstream: encode join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
		}
		if err := emit(r.key, raw); err != nil {
			return err
		}
	}
	return nil
}

// StreamEntries implements checkpoint.LiveStreamer: Entries with each
// batch's IPC stream written straight into the snapshot's body.
func (v *joinView) StreamEntries(ctx context.Context, emit func(key, value []byte) error, emitFrom func(key []byte, write func(w io.Writer) error) error) error {
	var encs viewEncoders
	for _, m := range v.metas {
		if err := emit(m[0], m[1]); err != nil {
			return err
		}
	}
	for _, r := range v.rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.sel != nil {
			// A view's rows, encoded through its selection straight
			// into the body (ipc_batch_select.go) when the direct path
			// takes them.
			enc, err := encs.of(v.mem, r.rec.Schema())
			if err != nil {
				return fmt.Errorf("arrowstream: encode join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
			}
			if _, ok := enc.planSel(r.rec, r.sel); ok {
				if err := emitFrom(r.key, enc.writeSel); err != nil {
					return fmt.Errorf("arrowstream: encode join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
				}
				continue
			}
		}
		rec, done, err := r.record(v.mem)
		if err != nil {
			return fmt.Errorf("arrowstream: gather join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
		}
		enc, err := encs.of(v.mem, rec.Schema())
		if err == nil {
			err = emitFrom(r.key, func(w io.Writer) error { return enc.write(w, rec) })
		}
		done()
		if err != nil {
			return fmt.Errorf("arrowstream: encode join batch %x of a live snapshot: %w", binary.BigEndian.Uint64(r.key[1:]), err)
		}
	}
	return nil
}

// Release implements checkpoint.LiveView.
func (v *joinView) Release() {
	if !v.done.CompareAndSwap(false, true) {
		return
	}
	for _, r := range v.rows {
		r.rec.Release()
	}
	v.rows, v.metas = nil, nil
	v.hold.release()
}

// EntryBytes implements checkpoint.LiveSizer: about the bytes of the
// entries (each batch's rows and its IPC framing, as encodeJoinRecord
// sizes its buffer), so that the snapshot's body is allocated once.
func (v *joinView) EntryBytes() int64 {
	var n int64
	for _, m := range v.metas {
		n += int64(len(m[0]) + len(m[1]))
	}
	for _, r := range v.rows {
		if r.sel != nil {
			// The rows' share of the record they are gathered from.
			share := vector.SlicedRecordBytes(r.rec) * int64(len(r.sel)) / max(r.rec.NumRows(), 1)
			n += int64(len(r.key)) + share + r.rec.NumCols()*72 + 1024
			continue
		}
		rec := r.rec
		if r.off != 0 || r.n != rec.NumRows() {
			rec = rec.NewSlice(r.off, r.off+r.n)
		}
		n += int64(len(r.key)) + vector.SlicedRecordBytes(rec) + rec.NumCols()*72 + 1024
		if rec != r.rec {
			rec.Release()
		}
	}
	return n
}
