package stateful

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// The join's state in the store mirrors its live batches: per partition
// and side, one entry per batch holding its rows as an Arrow IPC stream
// (written once, when the batch is made, and again only when it is
// compacted), and one small entry per batch with its eviction cursor and
// matched flags (written when they change). An epoch therefore writes its
// new rows once and a few bytes per batch it evicted from or matched,
// not a copy of every stored row it touched.
//
//	batch: 0x10|side ++ id (8 bytes, big-endian) → Arrow IPC stream of the rows
//	meta:  0x20|side ++ id                       → cursor (uint32 LE) ++ has-flags byte ++ matched bitmap
//
// A batch id is the epoch that made it << 8 (| 1 for rows converted from
// the old layout). The old layout (side byte ++ key ++ epoch ++ index →
// matched byte ++ encoded row, one entry per row) is still read: its rows
// are converted to a batch on the first epoch after a restart.
const (
	joinBatchTag = 0x10
	joinMetaTag  = 0x20
)

func joinStoreKey(kind, side byte, id uint64) []byte {
	k := make([]byte, 9)
	k[0] = kind | side
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// joinScratchMax bounds the encoding space a partition keeps.
const joinScratchMax = 1 << 20

// encodeJoinBatch writes a batch's rows as an Arrow IPC stream, into
// scratch's space when it is not nil (the bytes then live until scratch is
// next used).
func (s *statefulJoin) encodeJoinBatch(rec arrow.Record, scratch *[]byte) ([]byte, error) {
	return encodeJoinRecord(s.mem, rec, scratch)
}

// encodeJoinRecord is encodeJoinBatch with the allocator given: a live
// snapshot (stateful_join_snapshot.go) encodes batches on a maintenance
// goroutine, without the operator.
func encodeJoinRecord(mem memory.Allocator, rec arrow.Record, scratch *[]byte) ([]byte, error) {
	return encodeJoinRecordMax(mem, rec, scratch, joinScratchMax)
}

// encodeJoinRecordMax is encodeJoinRecord keeping a scratch space of up
// to keep bytes.
func encodeJoinRecordMax(mem memory.Allocator, rec arrow.Record, scratch *[]byte, keep int) ([]byte, error) {
	return encodeJoinRecordWith(&ipcStreamEncoder{mem: mem}, rec, scratch, keep)
}

// encodeJoinRecordWith is encodeJoinRecordMax writing through enc.
func encodeJoinRecordWith(enc *ipcStreamEncoder, rec arrow.Record, scratch *[]byte, keep int) ([]byte, error) {
	size := joinIPCSize(rec)
	var space []byte
	if scratch != nil && cap(*scratch) >= size {
		space = (*scratch)[:0]
	} else {
		space = make([]byte, 0, size)
	}
	buf := bytes.NewBuffer(space)
	defer func() {
		// A scratch space grown past keep (a compacted batch) is not
		// kept.
		if scratch != nil && buf.Cap() <= keep {
			*scratch = buf.Bytes()[:0]
		}
	}()
	if err := enc.write(buf, rec); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// joinIPCSize is about the bytes of rec's IPC stream, to reserve them up
// front: growing the buffer while writing copied each batch several
// times. The rows' bytes, not their buffers': a batch may be a slice of
// an epoch's buffers (stateful_join_split.go).
func joinIPCSize(rec arrow.Record) int {
	return int(vector.SlicedRecordBytes(rec)) + int(rec.NumCols())*72 + 1024
}

// decodeJoinBatch reads a batch written by encodeJoinBatch, checking its
// schema against the side's (the store's checksum passed, but a buggy
// writer must not crash the reader).
func (s *statefulJoin) decodeJoinBatch(raw []byte, schema *arrow.Schema) (rec arrow.Record, err error) {
	stream, stored, err := joinBatchStream(s.mem, raw, schema)
	if err != nil {
		return nil, err
	}
	if err := checkpoint.CheckIPCFraming(stored); err != nil {
		return nil, fmt.Errorf("join batch: %w: %w", err, checkpoint.ErrCorrupt)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("undecodable Arrow IPC: %v: %w", r, checkpoint.ErrCorrupt)
		}
	}()
	rd, err := ipc.NewReader(stream, ipc.WithAllocator(s.keep), ipc.WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("arrow IPC: %v: %w", err, checkpoint.ErrCorrupt)
	}
	defer rd.Release()
	var recs []arrow.Record
	defer func() { releaseRecords(recs) }()
	for rd.Next() {
		r := rd.Record()
		r.Retain()
		recs = append(recs, r)
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("arrow IPC: %v: %w", err, checkpoint.ErrCorrupt)
	}
	return concatRecords(s.keep, schema, recs)
}

// encodeJoinMeta renders a batch's cursor and matched flags.
func encodeJoinMeta[K joinKey](b *joinBatch[K]) []byte {
	v := binary.LittleEndian.AppendUint32(nil, uint32(b.cursor-b.base))
	if b.matched == nil {
		return append(v, 0)
	}
	v = append(v, 1)
	bits := make([]byte, (len(b.matched)+7)/8)
	for i, m := range b.matched {
		if m {
			bits[i/8] |= 1 << (i % 8)
		}
	}
	return append(v, bits...)
}

// writeChanges writes side tag's new, compacted and changed batches of
// partition p to its store.
func (s *statefulJoin) writeChanges(p int, tag byte, live interface{ changed() []joinChange }) error {
	st := s.state.stores[p]
	// A changelog copies what it logs: the batches are encoded into the
	// partition's scratch space, not a fresh (zeroed) buffer each.
	var scratch *[]byte
	if s.log {
		scratch = &s.parts[p].ipcScratch
	}
	streamer, _ := st.(checkpoint.ChangelogStreamer)
	deferrer, _ := st.(checkpoint.ChangelogDeferrer)
	for _, c := range live.changed() {
		if err := s.writeChange(p, tag, st, streamer, deferrer, scratch, c); err != nil {
			return err
		}
	}
	return nil
}

// writeChange writes one batch's changed entries to partition p's store
// st. The rows of a view are encoded through its selection when the
// direct path takes them: by the commit straight into the state log's
// record when the store defers values, else straight into the changelog
// (ipc_batch_select.go); else gathered into a record of their own for
// the write, released once written.
func (s *statefulJoin) writeChange(p int, tag byte, st checkpoint.StateStore, streamer checkpoint.ChangelogStreamer, deferrer checkpoint.ChangelogDeferrer, scratch *[]byte, c joinChange) error {
	if c.rec != nil && c.sel != nil && s.log && streamer != nil {
		enc, err := s.parts[p].encoder(s, tag, c.rec.Schema())
		if err != nil {
			return fmt.Errorf("arrowstream: encode join state of operator %d partition %d: %w", s.state.opID, p, err)
		}
		if size, ok := enc.planSel(c.rec, c.sel); ok {
			key := joinStoreKey(joinBatchTag, tag, c.id)
			if deferrer != nil {
				err = deferrer.LogUpsertDeferred(key, enc.deferSel(c.rec, size))
			} else {
				err = streamer.LogUpsertFrom(key, size, enc.writeSel)
			}
			if err != nil {
				return fmt.Errorf("arrowstream: encode join state of operator %d partition %d: %w", s.state.opID, p, err)
			}
			c.rec = nil // written
		}
	}
	if c.rec != nil {
		rec, err := gatherSel(s.mem, c.rec, c.sel)
		if err != nil {
			return fmt.Errorf("arrowstream: gather join state of operator %d partition %d: %w", s.state.opID, p, err)
		}
		defer rec.Release()
		c.rec = rec
	}
	if c.rec != nil {
		enc, err := s.parts[p].encoder(s, tag, c.rec.Schema())
		if err != nil {
			return fmt.Errorf("arrowstream: encode join state of operator %d partition %d: %w", s.state.opID, p, err)
		}
		if s.log && streamer != nil {
			// Encoded straight into the changelog: no copy of the
			// rows made first in a buffer of ours.
			err = streamer.LogUpsertFrom(joinStoreKey(joinBatchTag, tag, c.id), joinIPCSize(c.rec), func(w io.Writer) error {
				return enc.write(w, c.rec)
			})
			if err != nil {
				return fmt.Errorf("arrowstream: encode join state of operator %d partition %d: %w", s.state.opID, p, err)
			}
		} else {
			raw, err := encodeJoinRecordWith(enc, c.rec, scratch, joinScratchMax)
			if err != nil {
				return fmt.Errorf("arrowstream: encode join state of operator %d partition %d: %w", s.state.opID, p, err)
			}
			if err := putState(st, s.log, joinStoreKey(joinBatchTag, tag, c.id), raw); err != nil {
				return fmt.Errorf("arrowstream: write state of operator %d partition %d: %w", s.state.opID, p, err)
			}
		}
	}
	if c.meta != nil {
		if err := putState(st, s.log, joinStoreKey(joinMetaTag, tag, c.id), c.meta); err != nil {
			return fmt.Errorf("arrowstream: write state of operator %d partition %d: %w", s.state.opID, p, err)
		}
	}
	return nil
}

// joinChange is a batch to write: its rows (nil: unchanged; rows sel of
// rec for a view) and its meta entry (nil: none needed).
type joinChange struct {
	id   uint64
	rec  arrow.Record
	sel  []int32
	meta []byte
}

// changed returns the side's batches to write (new, compacted, evicted
// from or matched this epoch) and clears their flags.
func (s *joinSideLive[K]) changed() []joinChange {
	var out []joinChange
	for _, b := range s.changes {
		b.queued = false
		if b.rec == nil {
			continue // dropped: its entries were deleted
		}
		c := joinChange{id: b.id}
		if b.rewrite {
			c.rec, c.sel = b.rec, b.sel
			if !b.storedRec {
				b.storedRec = true
				s.entries++
			}
		}
		if b.dirty || b.matched != nil || b.cursor > b.base {
			c.meta = encodeJoinMeta(b)
			if !b.storedMeta {
				b.storedMeta = true
				s.entries++
				s.metas++
			}
		}
		b.rewrite, b.dirty = false, false
		out = append(out, c)
	}
	clear(s.changes)
	s.changes = s.changes[:0]
	return out
}

// dropBatch deletes a fully evicted batch of side tag from partition p's
// store (its rows and meta entries, those stored: a changelog does not log
// the delete of an entry never written).
func (s *statefulJoin) dropBatch(p int, tag byte, id uint64, storedRec, storedMeta bool) error {
	st := s.state.stores[p]
	for _, kind := range []byte{joinBatchTag, joinMetaTag} {
		if s.log && !(kind == joinBatchTag && storedRec || kind == joinMetaTag && storedMeta) {
			continue
		}
		if err := deleteState(st, s.log, joinStoreKey(kind, tag, id)); err != nil {
			return fmt.Errorf("arrowstream: delete state of operator %d partition %d: %w", s.state.opID, p, err)
		}
	}
	return nil
}

// loadJoinSide rebuilds side i's live state of partition p from its open
// store, converting rows of the old layout (written then into the store
// as a batch of epoch ep).
func loadJoinSide[K joinKey](ctx context.Context, s *statefulJoin, ep Epoch, p, i int) (_ *joinSideLive[K], err error) {
	side, tag, st := s.sides[i], byte(i), s.state.stores[p]
	wrap := func(err error) error {
		return fmt.Errorf("arrowstream: read %s join state of operator %d partition %d: %w", side.name, s.state.opID, p, err)
	}
	raws := map[uint64][]byte{}
	metas := map[uint64][]byte{}
	var legacyKeys [][]byte
	var legacyRows [][]byte
	var legacyMatched []bool
	err = st.Scan(func(k, v []byte) bool {
		switch {
		case len(k) == 9 && k[0] == joinBatchTag|tag:
			raws[binary.BigEndian.Uint64(k[1:])] = v
		case len(k) == 9 && k[0] == joinMetaTag|tag:
			metas[binary.BigEndian.Uint64(k[1:])] = v
		case len(k) > 0 && k[0] == tag && len(v) > 0:
			legacyKeys = append(legacyKeys, bytes.Clone(k))
			legacyMatched = append(legacyMatched, v[0] == 1)
			legacyRows = append(legacyRows, bytes.Clone(v[1:]))
		}
		return true
	})
	if err != nil {
		return nil, wrap(err)
	}
	live := newJoinSideLive[K]()
	if s.maxRowNumbers > 0 {
		live.index.maxNumber = s.maxRowNumbers
	}
	defer func() {
		if err != nil {
			live.release()
		}
	}()
	// Every entry of the side counts, those of batches loaded fully
	// evicted too: they stay in the store.
	live.entries = int64(len(raws) + len(metas))
	live.metas = int64(len(metas))
	ids := make([]uint64, 0, len(raws))
	for id := range raws {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	schema := side.codec.schema
	for _, id := range ids {
		rec, err := s.decodeJoinBatch(raws[id], schema)
		if err != nil {
			return nil, wrap(fmt.Errorf("batch %d: %w", id, err))
		}
		b, err := loadJoinBatch[K](ctx, s, i, id, rec, metas[id])
		rec.Release()
		if err != nil {
			return nil, wrap(fmt.Errorf("batch %d: %w", id, err))
		}
		if b.cursor >= b.end {
			b.release()
			continue
		}
		_, b.storedMeta = metas[id]
		b.storedRec = true
		if err := live.add(b); err != nil {
			return nil, wrap(fmt.Errorf("batch %d: %w", id, err))
		}
		if s.mergeable(i) {
			if _, err := live.mergeTail(s.keep); err != nil {
				return nil, wrap(err)
			}
		}
	}
	if len(legacyRows) == 0 {
		return live, nil
	}
	r := &sideRows{}
	defer r.release()
	if err := s.decodeSide(s.parts[p].codecs[i], r, legacyRows); err != nil {
		return nil, wrap(err)
	}
	if err := s.encodeKeys(ctx, side, r); err != nil {
		return nil, wrap(err)
	}
	rows := make([]int32, len(legacyRows))
	for j := range rows {
		rows[j] = int32(j)
	}
	b, err := buildJoinBatch(s, i, uint64(ep.ID)<<8|1, r, rows, keysOf[K](r), legacyMatched)
	if err != nil {
		return nil, wrap(err)
	}
	b.rewrite = true
	if err := live.add(b); err != nil {
		return nil, wrap(err)
	}
	live.mark(b)
	for _, k := range legacyKeys {
		if err := deleteState(st, s.log, k); err != nil {
			return nil, wrap(err)
		}
	}
	return live, nil
}

// loadJoinBatch makes a live batch of a stored one (rec borrowed) and its
// meta entry (nil: none).
func loadJoinBatch[K joinKey](ctx context.Context, s *statefulJoin, i int, id uint64, rec arrow.Record, meta []byte) (*joinBatch[K], error) {
	n := int(rec.NumRows())
	var cursor int
	var matched []bool
	if meta != nil {
		if len(meta) < 5 {
			return nil, fmt.Errorf("meta entry of %d bytes: %w", len(meta), checkpoint.ErrCorrupt)
		}
		cursor = int(binary.LittleEndian.Uint32(meta))
		if cursor > n {
			return nil, fmt.Errorf("cursor %d beyond its %d rows: %w", cursor, n, checkpoint.ErrCorrupt)
		}
		if meta[4] == 1 {
			bits := meta[5:]
			if len(bits) != (n+7)/8 {
				return nil, fmt.Errorf("%d bytes of matched flags for %d rows: %w", len(bits), n, checkpoint.ErrCorrupt)
			}
			matched = make([]bool, n)
			for j := range matched {
				matched[j] = bits[j/8]&(1<<(j%8)) != 0
			}
		}
	}
	r := &sideRows{rec: rec}
	rec.Retain()
	defer r.release()
	if err := s.encodeKeys(ctx, s.sides[i], r); err != nil {
		return nil, err
	}
	rows := make([]int32, n)
	for j := range rows {
		rows[j] = int32(j)
	}
	b, err := buildJoinBatch(s, i, id, r, rows, keysOf[K](r), matched)
	if err != nil {
		return nil, err
	}
	if b.rec != rec {
		// Stored batches are sorted by eviction time: the cursor would
		// not mean the evicted rows.
		b.release()
		return nil, fmt.Errorf("rows not in eviction-time order: %w", checkpoint.ErrCorrupt)
	}
	b.cursor = int32(cursor)
	return b, nil
}
