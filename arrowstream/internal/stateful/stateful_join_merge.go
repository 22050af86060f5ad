package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Merging a join side's live batches. A side that never evicts and tracks
// no matched flags (both sides of an inner join without a watermark, as
// Nexmark q3 and q20) would otherwise keep one batch per epoch and
// partition for ever: the probe of every epoch then gathers from as many
// batches as its keys hit, one small Take each, and the batch count, the
// probe's cost and the per-batch overhead grow with the run. Such a side's
// batches are merged in memory as a binary counter does: the newest batch
// is merged into the one before while that one holds at most twice its
// rows, so that each row is copied O(log n) times over a run and a side
// holds O(log n) batches.
//
// The merge is of the live state only: the store keeps one entry per
// batch as written (a merged batch is never written again: such a side
// has no cursor and no matched flags to record, and its rows are never
// compacted nor dropped), and a rebuild loads the entries and merges them
// the same way.

// mergeRatio: the newest batch is merged into the one before while that
// one holds at most mergeRatio times its rows.
const mergeRatio = 2

// mergeable tells whether a side's live batches may be merged: it never
// evicts and tracks no matched flags.
func (s *statefulJoin) mergeable(i int) bool {
	return s.sides[i].evict == evictNever && !s.tracksMatches(i)
}

// mergeTail merges the side's newest batches while the binary-counter rule
// holds (see above). Batches with pending store writes, or with evicted
// or compacted rows, are left alone. It reports how many merges it made.
func (s *joinSideLive[K]) mergeTail(mem memory.Allocator) (int, error) {
	merges := 0
	for len(s.batches) >= 2 {
		n := len(s.batches)
		a, b := s.batches[n-2], s.batches[n-1]
		if !mergeCandidate(a) || !mergeCandidate(b) || int64(a.end) > mergeRatio*int64(b.end) {
			return merges, nil
		}
		if err := s.mergeInto(mem, a, b); err != nil {
			return merges, err
		}
		merges++
	}
	return merges, nil
}

// mergeCandidate: b's rows are all live and numbered from 0, it has no
// eviction times or matched flags, and no store write is pending for it.
func mergeCandidate[K joinKey](b *joinBatch[K]) bool {
	return b.base == 0 && b.cursor == 0 && b.times == nil && b.matched == nil && !b.queued && !b.rewrite && !b.dirty && b.rec != nil
}

// mergeInto appends the rows of b, the side's newest batch, to a, the
// batch before it, and removes b. The key index keeps its refs: a's rows
// keep their numbers, and b's, renumbered after a's, are the tail of their
// key's refs (refs are appended in the order batches are added, and b was
// added last), so only those are rewritten.
func (s *joinSideLive[K]) mergeInto(mem memory.Allocator, a, b *joinBatch[K]) error {
	if last := len(s.batches) - 1; last < 1 || s.batches[last] != b || s.batches[last-1] != a {
		return fmt.Errorf("arrowstream: join state merge of batches %d and %d: not the side's two newest", a.id, b.id)
	}
	rec, err := concatRecords(mem, a.rec.Schema(), []arrow.Record{a.rec, b.rec})
	if err != nil {
		return fmt.Errorf("arrowstream: join state merge of batches %d and %d: %w", a.id, b.id, err)
	}
	shift := a.end
	for r := int32(0); r < b.end; r++ {
		if b.keyNull[r] {
			continue
		}
		kr := s.index[b.keys[r]]
		if kr == nil {
			continue
		}
		for j := len(kr.refs) - 1; j >= 0 && kr.refs[j].b == b; j-- {
			kr.refs[j] = joinRef[K]{a, kr.refs[j].row + shift}
		}
	}
	a.rec.Release()
	a.rec = rec
	a.keys = append(a.keys, b.keys...)
	a.keyNull = append(a.keyNull, b.keyNull...)
	a.end += b.end
	old := a.bytes + b.bytes
	a.bytes = a.size()
	s.bytes += a.bytes - old
	// b's store entries stay (they hold its rows): a merged batch never
	// writes nor deletes entries, so the side's count of entries holds.
	s.batches[len(s.batches)-1] = nil
	s.batches = s.batches[:len(s.batches)-1]
	b.release()
	return nil
}
