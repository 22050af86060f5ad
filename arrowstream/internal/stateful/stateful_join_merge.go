package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Merging a join side's live batches. A side that never evicts and tracks
// no matched flags (both sides of an inner join without a watermark, as
// Nexmark q3 and q20) would otherwise keep one batch per epoch and
// partition for ever: the probe of every epoch then gathers from as many
// batches as its keys hit, one small Take each, and the batch count, the
// probe's cost and the per-batch overhead grow with the run. Such a side's
// batches are merged in memory in tiers, as a tiered LSM compacts: a new
// batch is of level 0, and whenever the side's newest mergeFanIn batches
// are of one level they become one batch of the next level. A row is so
// copied once per level (a binary counter copied the wide rows of q20
// four times in 20 epochs, which cost more than the probe saved), and a
// side that merges holds at most fanIn−1 batches per level.
//
// A batch that holds mergeFullBytes of Arrow memory or mergeFullRows rows
// is full: it is not merged again, and the batches after it tier on their
// own. Without that bound a row was copied log_fanIn(n) times over a run
// of n epochs, a cost per event that grew with the run's length (q20's
// bids at 3.2 M events: three copies, the merges 74 % of its epochs' CPU
// against 29 % at 400 K; a stream running for days would copy each row
// once more for every eightfold of its epochs) and a batch whose rows
// outgrew its int32 row numbers. With it a row is copied at most
// log_fanIn(full / epoch batch) times however long the run, and a side
// holds one full batch per mergeFullBytes of its state besides fewer
// than fanIn per level below: a few dozen Go objects per 4 MiB.
//
// A merge copies every row of the batches it merges, which for a side
// with wide rows is as costly as storing them (Nexmark q20's bids, with
// their extra strings), and it pays off only when probes read many of the
// side's batches in one epoch. q20's bids are rarely probed with a match
// (a bid follows its auction), its auctions are, by every bid. So an epoch
// merges a side's tail only when its probes read at least mergeMinHits
// of the side's batches, or when the side is crowded (more than
// mergeMaxBatches of less than mergeBatchBytes each on average, crowded
// below): a side rarely matched keeps its batches as they were made (a
// view each of its epoch's input, stateful_join_view.go), and its batch
// count stays bounded by its bytes all the same (each batch is a few
// dozen Go objects the collector walks; a bound on the count alone made
// q20 and q4 copy every bid once from their 25th epoch on, session 39).
//
// The merge is of the live state only: the store keeps one entry per
// batch as written (a merged batch is never written again: such a side
// has no cursor and no matched flags to record, and its rows are never
// compacted nor dropped), and a rebuild loads the entries and merges them
// the same way (whatever the probes read).

// mergeFanIn is how many batches of one level are merged into one.
const mergeFanIn = 8

// mergeFullBytes and mergeFullRows make a batch full (see above): large
// enough that a probe's gather from a few of them costs no more than from
// one, small enough that merging into one copies a bounded part of the
// side.
const (
	mergeFullBytes = 4 << 20
	mergeFullRows  = 1 << 20
)

// mergeMinHits is how many of a side's stored batches an epoch's probes
// read for the epoch to merge the side's tail; mergeMaxBatches is how
// many batches a side holds before it merges whatever the probes read,
// unless they average mergeBatchBytes of Arrow memory or more (crowded).
const (
	mergeMinHits    = 2
	mergeMaxBatches = 24
	mergeBatchBytes = 64 << 10
)

// mergeable tells whether a side's live batches may be merged: it never
// evicts and tracks no matched flags.
func (s *statefulJoin) mergeable(i int) bool {
	return s.sides[i].evict == evictNever && !s.tracksMatches(i)
}

// mergeRecords is the rows of tail's batches (recs: their records) in
// one record: a concatenation, or one gather per column when some batch
// is a view of its record (stateful_join_view.go).
func mergeRecords[K joinKey](mem memory.Allocator, tail []*joinBatch[K], recs []arrow.Record) (arrow.Record, error) {
	views := false
	for _, b := range tail {
		views = views || b.sel != nil
	}
	schema := tail[0].rec.Schema()
	if !views {
		return concatRecords(mem, schema, recs)
	}
	var distinct []arrow.Record
	index := map[arrow.Record]int32{}
	// The row lists sized once: grown by appends they were copied a
	// dozen times over in a tail of 8 epochs (q4 at 3.2 M events: a third
	// of its merges' CPU in growslice).
	n := 0
	for _, b := range tail {
		n += int(b.end)
	}
	src, rows := make([]int32, 0, n), make([]int32, 0, n)
	for _, b := range tail {
		k, ok := index[b.rec]
		if !ok {
			k = int32(len(distinct))
			index[b.rec] = k
			distinct = append(distinct, b.rec)
		}
		for r := int32(0); r < b.end; r++ {
			src = append(src, k)
			rows = append(rows, int32(selRow(b.sel, int(r))))
		}
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	chunks := make([]arrow.Array, len(distinct))
	for c := 0; c < schema.NumFields(); c++ {
		for k, rec := range distinct {
			chunks[k] = rec.Column(c)
		}
		a, err := vector.GatherChunks(mem, chunks, src, rows)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
	}
	rec := array.NewRecord(schema, cols, int64(len(rows)))
	settleNullCounts(rec)
	return rec, nil
}

// mergeTail merges the side's newest mergeFanIn batches while they are of
// one level (see above). Full batches, batches with pending store writes,
// or with evicted or compacted rows, are left alone. It reports how many merges
// it made.
func (s *joinSideLive[K]) mergeTail(mem memory.Allocator) (int, error) {
	merges := 0
	for len(s.batches) >= mergeFanIn {
		tail := s.batches[len(s.batches)-mergeFanIn:]
		for _, b := range tail {
			if !mergeCandidate(b) || s.full(b) || b.level != tail[0].level || b.indexed != tail[0].indexed {
				return merges, nil
			}
		}
		if err := s.mergeBatches(mem, tail); err != nil {
			return merges, err
		}
		merges++
	}
	return merges, nil
}

// crowded tells whether the side holds so many batches that its tail
// merges whatever the probes read: more than mergeMaxBatches, and fewer
// than batchBytes of Arrow memory per batch on average. The bound is on
// the batch count per byte held, not on the count: a side rarely probed
// whose epochs are large (q20's and q4's bids, 0.1 to 1 MB per epoch and
// partition) keeps them as they were made, a few dozen Go objects per
// batch against its megabytes, where a bound on the count alone copied
// every row once from its 25th epoch on (q20: a third of its CPU per
// event at 3.2 M events, none at 200 K; q4 the same); a side of many small
// epochs (the 20 rows per 10 ms) still merges them, as before.
func (s *joinSideLive[K]) crowded() bool {
	n := int64(len(s.batches))
	return n > mergeMaxBatches && n*s.batchBytes > s.arrow
}

// full tells whether b is too large to merge again (see above).
func (s *joinSideLive[K]) full(b *joinBatch[K]) bool {
	return b.arrow >= s.fullBytes || b.end >= s.fullRows
}

// mergeCandidate: b's rows are all live and numbered from 0, it has no
// eviction times or matched flags, and no store write is pending for it.
// Batches merge when all are indexed or all pending: the side indexes its
// batches in the order they were added, so its pending batches are its
// newest, and a pending batch that probes pass over (stateful_join_zone.go)
// may stay so for ever; its tail must merge all the same.
func mergeCandidate[K joinKey](b *joinBatch[K]) bool {
	return b.base == 0 && b.cursor == 0 && b.times == nil && b.matched == nil && !b.queued && !b.rewrite && !b.dirty && b.rec != nil
}

// mergeBatches concatenates tail, the side's newest batches, into its
// first batch, one level up, and removes the others. The key index keeps
// its links: the first batch's rows keep their numbers, and the others'
// were numbered right after them (batches are indexed in the order they
// are added, and tail was added last), so only the ranges' table changes.
func (s *joinSideLive[K]) mergeBatches(mem memory.Allocator, tail []*joinBatch[K]) error {
	first := tail[0]
	recs := make([]arrow.Record, len(tail))
	offs := make([]int32, len(tail))
	var end int32
	for j, b := range tail {
		if b.slot != len(s.batches)-len(tail)+j {
			return fmt.Errorf("arrowstream: join state merge of batch %d: not among the side's newest", b.id)
		}
		recs[j], offs[j] = b.rec, end
		end += b.end
	}
	// Batches whose keys are their records' column stay so merged (the
	// merged record holds the column); with any that keeps slices, all
	// keep slices, read before the records change.
	derived := true
	for _, b := range tail {
		derived = derived && b.derived && b.keyCol == first.keyCol
	}
	if !derived {
		for _, b := range tail {
			b.materializeKeys()
		}
	}
	rec, err := mergeRecords(mem, tail, recs)
	if err != nil {
		return fmt.Errorf("arrowstream: join state merge of batches %d..%d: %w", first.id, tail[len(tail)-1].id, err)
	}
	// The key index keeps every link: the tail's rows were numbered
	// right after the first's, in order, so they keep their numbers as
	// rows of the first. After evictions elsewhere (not in a side that
	// merges) a renumbering lays the ranges out again. Pending batches
	// are in no range: the merged batch stays pending, its key range
	// theirs, scanned as often as the most scanned of them.
	if first.indexed && !s.index.joinRanges(tail, offs) {
		s.index.renumber()
		if !s.index.joinRanges(tail, offs) {
			rec.Release()
			return fmt.Errorf("arrowstream: join state merge of batches %d..%d: their key index ranges are not adjacent", first.id, tail[len(tail)-1].id)
		}
	}
	if !first.indexed {
		s.mergePending(tail)
	}
	first.rec.Release()
	first.dropView()
	first.rec = rec
	old, oldArrow := first.bytes, first.arrow
	// The store entries the merged rows are, for a snapshot written from
	// the live state (stateful_join_snapshot.go).
	pieces := first.storedPieces()
	for _, b := range tail[1:] {
		pieces = append(pieces, b.storedPieces()...)
	}
	first.pieces = pieces
	for _, b := range tail[1:] {
		first.keys = append(first.keys, b.keys...)
		first.keyNull = append(first.keyNull, b.keyNull...)
		old += b.bytes
		oldArrow += b.arrow
	}
	first.end = end
	first.level++
	s.resized(first, old, oldArrow)
	// The others' store entries stay (they hold their rows): a merged
	// batch never writes nor deletes entries, so the side's count of
	// entries holds.
	for _, b := range tail[1:] {
		b.release()
	}
	clear(tail[1:])
	s.batches = s.batches[:len(s.batches)-len(tail)+1]
	return nil
}

// mergePending folds the pending batches tail[1:] into tail[0]: its key
// range widened to theirs, its scans the most of theirs, and they leave
// the pending list (tail[0] keeps its place there: the tail is the side's
// newest batches, so the list stays in the order batches were added).
func (s *joinSideLive[K]) mergePending(tail []*joinBatch[K]) {
	first := tail[0]
	gone := make(map[*joinBatch[K]]bool, len(tail)-1)
	for _, b := range tail[1:] {
		first.zone.union(b.zone)
		first.scans = max(first.scans, b.scans)
		gone[b] = true
	}
	first.zone.lo, first.zone.hi = cloneKey(first.zone.lo), cloneKey(first.zone.hi)
	kept := s.pending[:0]
	for _, b := range s.pending {
		if !gone[b] {
			kept = append(kept, b)
		}
	}
	clear(s.pending[len(kept):])
	s.pending = kept
}
