package stateful

import (
	"math"
	"sort"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// The stream-stream join's live state: each side of each partition keeps
// its stored rows as Arrow record batches (one per epoch that stored
// rows), a key index from the join key to row positions, and an
// event-time index of the batches, kept in memory across epochs. Matching
// probes the index with the other side's new rows; eviction pops the
// batches whose earliest live row is due. The store holds the same
// batches (stateful_join_store.go) and is read only to rebuild this after
// a start, a restart or an aborted epoch.
//
// A batch's rows are sorted by eviction time when it is built (rows with
// no eviction time last), so the rows a watermark evicts are always a
// prefix of a batch: a batch's dead rows are [0, cursor) and eviction
// advances the cursor. A batch mostly dead is compacted to its live rows,
// keeping its row numbering through base (rows [base, end)), so that the
// key index never needs rewriting.

// joinKey is the form of an encoded join key the key index hashes:
// the word of a single fixed-width key, else the key's bytes as a string.
type joinKey interface{ uint64 | string }

// noEvictTime sorts rows that are never evicted after every other.
const noEvictTime = int64(math.MaxInt64)

// joinBatch is a batch of stored rows of one side.
type joinBatch[K joinKey] struct {
	id   uint64       // store key suffix (stateful_join_store.go)
	rec  arrow.Record // rows [base, end): plain columns of the side's codec schema
	base int32
	end  int32
	// cursor: rows below are evicted (base ≤ cursor ≤ end).
	cursor int32
	// By row − base:
	keys    []K
	keyNull []bool // a null (not null-safe) key: never indexed, never matches
	// derived: keys and keyNull are nil, the keys are rec's column keyCol
	// read in place (keySpan, stateful_join_keycol.go).
	derived bool
	keyCol  int
	times   []int64 // ascending eviction times; nil when the side never evicts
	matched []bool  // nil when the side does not track matches
	// dirty: the cursor or a matched flag changed this epoch, so its
	// store record is rewritten.
	dirty bool
	// rewrite: the rows are new or were compacted, so the stored batch
	// is (re)written.
	rewrite bool
	queued  bool // in its side's changed list
	slot    int  // index in its side's batches
	level   int  // merges it went through (stateful_join_merge.go)
	bytes   int64
	// arrow is the part of bytes in Arrow buffers (counted by the
	// query's allocator; the rest is reserved, stateAccount).
	arrow int64
	// storedRec, storedMeta: the store holds the batch's rows, its meta
	// entry (so that the side counts the store's entries).
	storedRec, storedMeta bool
	// indexed: the batch's rows are in the side's key index; until then
	// probes scan them (stateful_join_scan.go), scans counting how often.
	indexed bool
	scans   int
	// zone is the range of the batch's keys when it was added: a probe
	// whose keys are all outside it does not scan it (stateful_join_zone.go).
	zone keyRange[K]
	// gid: row r's number in the key index is gid+r (set when indexed;
	// stateful_join_index.go).
	gid int32
	// sel, in: the batch is a view of an epoch's input record in
	// (stateful_join_view.go): row k of the batch (k = row − base) is row
	// sel[k] of rec (nil: row k). sel is never written once made.
	sel []int32
	in  *joinInput
	// pieces are the store entries whose rows the batch holds, in row
	// order, once batches were merged in memory (stateful_join_merge.go);
	// nil: the batch is its own entry (id, rec, its meta).
	pieces []joinPiece
	// seg is the batch's candidate pairs of the probe being collected
	// (candidates; nil between probes).
	seg *joinPairs[K]
}

func (b *joinBatch[K]) live() int32 { return b.end - b.cursor }

// size approximates the batch's memory: its buffers and per-row slices.
func (b *joinBatch[K]) size() int64 {
	var zero K
	n := int64(len(b.keys))*int64(unsafe.Sizeof(zero)) + int64(len(b.keyNull)+len(b.matched)) + int64(len(b.times))*8 + int64(len(b.sel))*4
	for _, k := range b.keys {
		n += keyBytes(k)
	}
	return n + b.zoneBytes() + b.arrowSize()
}

// arrowSize is the part of size in the batch's Arrow buffers (a view's:
// its rows' share of the record it views; the record is counted whole,
// once, in statefulJoin.viewHeld).
func (b *joinBatch[K]) arrowSize() int64 {
	switch {
	case b.rec != nil && b.in != nil:
		return b.in.viewShare(int(b.end - b.base))
	case b.rec != nil:
		return recordBytes(b.rec)
	}
	return 0
}

// resized recomputes b's sizes after its rows changed and adds the
// change to the side's counts (old: the sizes counted before, of b and
// of any batches merged into it).
func (s *joinSideLive[K]) resized(b *joinBatch[K], oldBytes, oldArrow int64) {
	b.bytes, b.arrow = b.size(), b.arrowSize()
	s.bytes += b.bytes - oldBytes
	s.arrow += b.arrow - oldArrow
}

// release frees the batch's rows.
func (b *joinBatch[K]) release() {
	b.dropView()
	if b.rec != nil {
		b.rec.Release()
		b.rec = nil
	}
	b.keys, b.keyNull, b.times, b.matched = nil, nil, nil, nil
}

// joinSideLive is one side's live state in one partition.
type joinSideLive[K joinKey] struct {
	batches []*joinBatch[K]
	// fullBytes and fullRows: a batch holding this many Arrow bytes or
	// rows is full and not merged again (stateful_join_merge.go).
	fullBytes int64
	fullRows  int32
	// batchBytes: the side is crowded when it holds more than
	// mergeMaxBatches batches of fewer Arrow bytes each on average
	// (stateful_join_merge.go).
	batchBytes int64
	index      joinKeyIndex[K]         // stateful_join_index.go
	due        timeHeap[*joinBatch[K]] // batches by their earliest live eviction time
	rows       int64                   // live rows
	bytes      int64                   // approximate memory of batches and index
	arrow      int64                   // the part of bytes in Arrow buffers
	entries    int64                   // the side's entries in the store
	metas      int64                   // how many of them are meta entries
	// changes are the batches whose store entries the epoch rewrites.
	changes []*joinBatch[K]
	// pending are the batches not indexed yet, in the order they were
	// added (stateful_join_scan.go).
	pending []*joinBatch[K]
}

// mark queues b's store entries for rewriting at the end of the epoch.
func (s *joinSideLive[K]) mark(b *joinBatch[K]) {
	if !b.queued {
		b.queued = true
		s.changes = append(s.changes, b)
	}
}

func newJoinSideLive[K joinKey]() *joinSideLive[K] {
	return &joinSideLive[K]{index: newJoinKeyIndex[K](), fullBytes: mergeFullBytes, fullRows: mergeFullRows, batchBytes: mergeBatchBytes}
}

// joinKeyOverhead is the approximate Go-heap bytes of a key index entry:
// its table slots, at most half full, and its slab entry.
const joinKeyOverhead = 64

// add makes b a batch of the side: indexes its live rows by key and by
// time.
func (s *joinSideLive[K]) add(b *joinBatch[K]) error {
	s.addPending(b)
	return s.indexPending()
}

// addPending makes b a batch of the side, indexed by time, its rows to
// be indexed by key later (indexPending): probes scan them meanwhile.
func (s *joinSideLive[K]) addPending(b *joinBatch[K]) {
	s.setZone(b)
	s.resized(b, 0, 0)
	b.slot = len(s.batches)
	s.batches = append(s.batches, b)
	s.rows += int64(b.live())
	s.pending = append(s.pending, b)
	s.schedule(b)
}

// indexPending indexes the live rows of the pending batches by key, in
// the order the batches were added (a merge relies on a key's refs being
// in that order).
// On an error (the index out of row numbers) the batches from the one
// that failed stay pending.
func (s *joinSideLive[K]) indexPending() error {
	for j, b := range s.pending {
		if b.rec != nil && !b.indexed {
			if err := s.indexBatch(b); err != nil {
				n := copy(s.pending, s.pending[j:])
				clear(s.pending[n:])
				s.pending = s.pending[:n]
				return err
			}
		}
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	return nil
}

// indexBatch adds b's live rows to the key index.
func (s *joinSideLive[K]) indexBatch(b *joinBatch[K]) error {
	bytes, err := s.index.insertRows(b, b.cursor, b.end)
	if err != nil {
		return err
	}
	b.indexed = true
	s.bytes += bytes
	return nil
}

// schedule indexes b by its earliest live eviction time, if any.
func (s *joinSideLive[K]) schedule(b *joinBatch[K]) {
	if b.times == nil || b.cursor >= b.end {
		return
	}
	if t := b.times[b.cursor-b.base]; t != noEvictTime {
		s.due.push(t, b)
	}
}

// evict advances b's cursor past the rows at or below thr, unindexing
// them, and returns the first row it evicted (rows [from, b.cursor)).
func (s *joinSideLive[K]) evict(b *joinBatch[K], thr int64) (from int32) {
	from = b.cursor
	rel := b.times[from-b.base:]
	n := int32(sort.Search(len(rel), func(i int) bool { return rel[i] > thr }))
	// The cursor first: the index tells the rows it unlinks dead by it.
	b.cursor = from + n
	if b.indexed {
		s.bytes -= s.index.evictRows(b, from, b.cursor)
	}
	if b.in != nil {
		b.in.live.Add(-int64(n))
	}
	b.dirty = true
	s.mark(b)
	s.rows -= int64(n)
	return from
}

// drop removes a batch whose rows are all evicted.
func (s *joinSideLive[K]) drop(b *joinBatch[K]) {
	if i := b.slot; i < len(s.batches) && s.batches[i] == b {
		last := len(s.batches) - 1
		s.batches[i] = s.batches[last]
		s.batches[i].slot = i
		s.batches[last] = nil
		s.batches = s.batches[:last]
	}
	if b.indexed {
		s.index.forget(b)
	}
	s.bytes -= b.bytes
	s.arrow -= b.arrow
	s.entries -= entryCount(b.storedRec) + entryCount(b.storedMeta)
	s.metas -= entryCount(b.storedMeta)
	b.storedRec, b.storedMeta = false, false
	b.release()
}

func entryCount(stored bool) int64 {
	if stored {
		return 1
	}
	return 0
}

// shouldCompact: most of b's rows are evicted, and enough to be worth a
// copy.
func (b *joinBatch[K]) shouldCompact() bool {
	dead := b.cursor - b.base
	return dead >= 1024 && dead > b.end-b.base-dead
}

// compact copies b's live rows into a new record, keeping their numbers.
func (s *joinSideLive[K]) compact(mem memory.Allocator, b *joinBatch[K]) error {
	off := b.cursor - b.base
	n := b.end - b.cursor
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(selRow(b.sel, int(off)+i))
	}
	rec, err := vector.TakeRecord(mem, b.rec, idx)
	if err != nil {
		return err
	}
	settleNullCounts(rec)
	b.rec.Release()
	b.dropView()
	b.rec = rec
	if !b.derived {
		b.keys = append([]K(nil), b.keys[off:]...)
		b.keyNull = append([]bool(nil), b.keyNull[off:]...)
	}
	if b.times != nil {
		b.times = append([]int64(nil), b.times[off:]...)
	}
	if b.matched != nil {
		b.matched = append([]bool(nil), b.matched[off:]...)
	}
	b.base = b.cursor
	b.rewrite = true
	s.mark(b)
	s.resized(b, b.bytes, b.arrow)
	b.dirty = true
	return nil
}

// release frees every batch.
func (s *joinSideLive[K]) release() {
	for _, b := range s.batches {
		b.release()
	}
	s.index.release()
	s.batches, s.due, s.changes, s.pending = nil, nil, nil, nil
}

func keyBytes[K joinKey](k K) int64 {
	if s, ok := any(k).(string); ok {
		return int64(len(s))
	}
	return 0
}

// recordBytes is the size of a record's buffers.
func recordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataBytes(dict)
	}
	return n
}
