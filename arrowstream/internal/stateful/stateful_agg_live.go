package stateful

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arrowstream/arrowstream/vector"
)

// aggLive is a streaming aggregation's state kept decoded between epochs:
// the groups in a vector.LiveAggregate (accumulators updated in place),
// an event-time index of the groups that carry a time key, and the groups
// the current epoch touched. The state store is written only with the
// epoch's changes and read only to rebuild this after a restart or an
// aborted epoch.
type aggLive struct {
	agg *vector.LiveAggregate
	// version is the state version the groups hold: the epoch that
	// reads it may use them. -1 while an epoch is changing them (until
	// its commit) or after an abort: the next epoch reloads.
	version int64

	times   timeBuckets // groups with a valid time key, by time
	indexed []bool      // by group: in times (or in open)
	// open holds, for a sliding window aggregated by panes, the groups
	// taken from times whose first window was emitted but not their
	// last (stateful_agg_panes.go).
	open []int32

	touched []uint32 // by group: the epoch stamp of its last change
	stamp   uint32
	dirty   []int32 // groups changed in this epoch, in first-change order
	// added: by dirty entry, the group was not live before this epoch
	// (a new id, or a deleted group whose key came back).
	added []bool
	// addedBits is sortDirty's scratch (by group: added), kept for its
	// capacity (stateful_agg_dirty.go).
	addedBits []uint64
	gone      []bool // by group: deleted (dead) in the aggregate
	// empty is the state record of an epoch that changed no group
	// (changedState); nil until one did.
	empty arrow.Record
	// partOf is by group its state partition + 1 (0: not known, a group
	// rebuilt from the stores and not changed since), noted when a
	// change is logged, so that a live snapshot of a few partitions
	// copies only their groups (offerLive).
	partOf []int32
	// partsUnder is the partitioning partOf follows; keys the groups'
	// store keys (stateful_agg_keys.go).
	partsUnder partKey
	keys       storeKeys
	// dueList is due's list, kept for its capacity.
	dueList []int32
	// panes is evictPanes' scratch, kept between evicting epochs for its
	// capacity only (stateful_agg_panes.go).
	panes paneScratch
	// ids is the number of group ids at the last compact, newIDs the
	// latest increase of it between two (0 until one added groups):
	// compact drops the dead groups early when as many new ones would
	// grow the table and dropping them first would not.
	ids, newIDs int
	// offered is liveIn's result, kept for its capacity only.
	offered []int32
	// logged is logChanged's scratch, kept for its capacity only: an
	// epoch of a windowed aggregation has tens of thousands of changed
	// groups, whose lists grew from empty every epoch.
	logged logScratch
}

// logScratch: by position in dirty, the groups whose store key is not
// kept (missing), their ids (gids), and each dirty group's row in the
// key encode or -1 (pos).
type logScratch struct {
	missing, gids, pos []int32
	// batch lays the changes out by partition (changelog_batch.go).
	batch logBatches
	// words holds the new groups' keys encoded from the aggregation's
	// words, every the positions of all key columns
	// (stateful_agg_wordkeys.go).
	words vector.GroupKeys
	every []int
	// vals holds the changed groups' value rows written from the
	// accumulators (LiveAggregate.EncodeValues).
	vals vector.GroupValues
	// ups and dels hand a partition's changed and evicted groups to the
	// log (logChanged, dropStored).
	ups  aggUpserts
	dels aggDeletes
}

func (s *logScratch) bytes() int64 {
	return int64(cap(s.missing)+cap(s.gids)+cap(s.pos))*4 + s.batch.bytes() + s.words.HeapBytes() + s.vals.HeapBytes() + int64(cap(s.every))*8
}

func newAggLive(agg *vector.LiveAggregate) *aggLive {
	return &aggLive{agg: agg, version: -1}
}

// beginEpoch starts a new set of changed groups.
func (l *aggLive) beginEpoch() {
	l.stamp++
	if l.stamp == 0 { // wrapped: old stamps could look current
		clear(l.touched)
		l.stamp = 1
	}
	l.dirty, l.added = l.dirty[:0], l.added[:0]
}

// merge folds partial rows into the groups, notes the changed ones and,
// when times is given (the time key of every row, valid per the array),
// indexes the groups not indexed yet by their time.
func (l *aggLive) merge(ctx context.Context, rec arrow.Record, times []arrow.Timestamp, valid arrow.Array) error {
	gids, err := l.agg.Merge(ctx, rec)
	if err != nil {
		return err
	}
	l.note(gids, times, valid)
	return nil
}

// note records that rows went to the groups gids: the groups changed in
// this epoch and, when times is given (by row, valid per the array), the
// time index of the groups not indexed yet. One pass over the rows, the
// validity read from the bitmap (no per-row interface call).
func (l *aggLive) note(gids []int32, times []arrow.Timestamp, valid arrow.Array) {
	n := l.agg.NumGroups()
	before := len(l.touched)
	l.touched = growTo(l.touched, n)
	l.gone = growTo(l.gone, n)
	touched, stamp := l.touched, l.stamp
	if times == nil {
		for _, g := range gids {
			if touched[g] != stamp {
				l.touch(g, before)
			}
		}
		return
	}
	l.indexed = growTo(l.indexed, n)
	indexed := l.indexed
	var bm []byte
	off := 0
	if valid.NullN() > 0 {
		bm, off = valid.NullBitmapBytes(), valid.Data().Offset()
	}
	for i, g := range gids {
		if touched[g] != stamp {
			l.touch(g, before)
		}
		if !indexed[g] && (bm == nil || bitutil.BitIsSet(bm, off+i)) {
			indexed[g] = true
			l.times.push(int64(times[i]), g)
		}
	}
}

// noteGroups is note for a batch given as its distinct groups ids (in
// order of first appearance) and the first row of each: the same groups
// noted in the same order, once per group instead of once per row. A
// group's time is its first row's: the time is a grouping key, so every
// row of a group carries the same one (the caller passes times only when
// the key has no null struct, whose rows group together whatever their
// fields hold).
func (l *aggLive) noteGroups(ids, first []int32, times []arrow.Timestamp, valid arrow.Array) {
	n := l.agg.NumGroups()
	before := len(l.touched)
	l.touched = growTo(l.touched, n)
	l.gone = growTo(l.gone, n)
	touched, stamp := l.touched, l.stamp
	for _, g := range ids {
		if touched[g] != stamp {
			l.touch(g, before)
		}
	}
	if times == nil {
		return
	}
	l.indexed = growTo(l.indexed, n)
	indexed := l.indexed
	var bm []byte
	off := 0
	if valid.NullN() > 0 {
		bm, off = valid.NullBitmapBytes(), valid.Data().Offset()
	}
	for j, g := range ids {
		i := int(first[j])
		if !indexed[g] && (bm == nil || bitutil.BitIsSet(bm, off+i)) {
			indexed[g] = true
			l.times.push(int64(times[i]), g)
		}
	}
}

// touch notes the first change of group g in this epoch (groups from
// before on were created in it).
func (l *aggLive) touch(g int32, before int) {
	l.touched[g] = l.stamp
	l.dirty = append(l.dirty, g)
	l.added = append(l.added, int(g) >= before || l.gone[g])
	l.gone[g] = false
}

// due pops the groups whose time is at or below limit (µs), into a list
// valid until the next call: it is kept for its capacity (a windowed
// aggregation evicts some ten thousand groups an epoch, and the list grew
// from empty into fresh memory each time) and cut to empty first, so that
// no epoch sees the ids of the one before.
func (l *aggLive) due(limit int64) []int32 {
	out := l.times.popDue(limit, l.dueList[:0])
	l.dueList = out
	for _, g := range out {
		l.indexed[g] = false
	}
	return out
}

// remove deletes groups from the aggregate.
func (l *aggLive) remove(gids []int32) {
	l.agg.Delete(gids)
	l.gone = growTo(l.gone, l.agg.NumGroups())
	for _, g := range gids {
		l.gone[g] = true
	}
}

// notePart records that group g's state is in partition p.
func (l *aggLive) notePart(g int32, p int) {
	l.partOf = growTo(l.partOf, l.agg.NumGroups())
	l.partOf[g] = int32(p) + 1
}

// liveIn returns the live groups of the partitions in want, and those
// whose partition is not known, in a slice valid until the next call
// (kept for its capacity: a windowed aggregation offers a live snapshot
// of some ten thousand groups most epochs, and the list grew from empty
// into fresh memory each time).
func (l *aggLive) liveIn(want []bool) []int32 {
	l.partOf = growTo(l.partOf, l.agg.NumGroups())
	out := l.offered[:0]
	for g := int32(0); g < int32(l.agg.NumGroups()); g++ {
		if p := l.partOf[g]; !l.agg.IsDead(g) && (p == 0 || want[p-1]) {
			out = append(out, g)
		}
	}
	l.offered = out
	return out
}

// all returns every live group.
func (l *aggLive) all() []int32 {
	out := make([]int32, 0, l.agg.NumLive())
	for g := int32(0); g < int32(l.agg.NumGroups()); g++ {
		if !l.agg.IsDead(g) {
			out = append(out, g)
		}
	}
	return out
}

// compact renumbers the groups when deleted ones hold most ids, or when
// as many new groups as the latest epoch added would grow the table and
// dropping the deleted ones first would not (ShouldCompactFor), carrying
// the time index over. It must run between epochs' uses of group ids.
func (l *aggLive) compact(ctx context.Context) error {
	n := l.agg.NumGroups()
	if n > l.ids {
		l.newIDs = n - l.ids
	}
	l.ids = n
	if !l.agg.ShouldCompactFor(l.newIDs) {
		return nil
	}
	remap, err := l.agg.Compact(ctx)
	if err != nil {
		return err
	}
	if g, ok := l.times.remap(remap); !ok { // same times, same order
		return fmt.Errorf("arrowstream: live aggregation state: indexed group %d was deleted", g)
	}
	for i, g := range l.open {
		if l.open[i] = remap[g]; l.open[i] < 0 {
			return fmt.Errorf("arrowstream: live aggregation state: open pane group %d was deleted", g)
		}
	}
	// The by-group slices are renumbered in place (a windowed
	// aggregation compacts about every epoch; fresh ones were allocated
	// and grown back each time).
	n = l.agg.NumGroups()
	l.ids = n
	l.indexed = remapIn(l.indexed, remap, n)
	l.partOf = remapIn(l.partOf, remap, n)
	l.keys.remap(remap, n)
	clear(l.touched) // stamps restart at 0
	l.touched = cutTo(l.touched, n)
	clear(l.gone) // the dead groups are gone
	l.gone = cutTo(l.gone, n)
	l.stamp, l.dirty, l.added = 0, l.dirty[:0], l.added[:0]
	return nil
}

// remapIn carries s, by group, over a renumbering (remap: the new id of
// every old one, -1 for a dropped group; kept groups keep their order, so
// a new id is never past its old one and a forward pass moves each value
// down before anything overwrites it) and cuts it to n groups. Groups
// past len(s) hold the zero value.
func remapIn[T any](s []T, remap []int32, n int) []T {
	var zero T
	for old, g := range remap {
		switch {
		case g < 0 || int(g) >= len(s):
		case old < len(s):
			s[g] = s[old]
		default:
			s[g] = zero
		}
	}
	return cutTo(s, n)
}

// heapBytes is the Go-heap memory of the live state.
func (l *aggLive) heapBytes() int64 {
	return l.agg.HeapBytes() + l.times.bytes() +
		int64(cap(l.indexed)) + int64(cap(l.open))*4 + int64(cap(l.touched))*4 + int64(cap(l.dirty))*4 +
		int64(cap(l.added)) + int64(cap(l.addedBits))*8 + int64(cap(l.gone)) + int64(cap(l.partOf))*4 + l.keys.bytes() +
		l.panes.bytes() + l.logged.bytes() + int64(cap(l.offered))*4 + int64(cap(l.dueList))*4
}

// changedState returns the partial state of the groups the epoch
// changed (owned by the caller). An epoch that changed none gets one
// empty record kept for those epochs (retained for it), not a record of
// its own: an idle stateful query's epoch built one per operator.
func (l *aggLive) changedState() (arrow.Record, error) {
	if len(l.dirty) > 0 {
		return l.agg.State(l.dirty)
	}
	if l.empty == nil {
		rec, err := l.agg.State(nil)
		if err != nil {
			return nil, err
		}
		l.empty = rec
	}
	l.empty.Retain()
	return l.empty, nil
}

func (l *aggLive) close() {
	if l.empty != nil {
		l.empty.Release()
		l.empty = nil
	}
	l.agg.Close()
	l.dropPaneScratch()
	l.panes.slots.release()
}

// dropPaneScratch closes evictPanes' scratch aggregations, if any.
func (l *aggLive) dropPaneScratch() {
	if l.panes.agg != nil {
		l.panes.agg.Close()
		l.panes.agg = nil
	}
	if l.panes.byKey != nil {
		l.panes.byKey.Close()
		l.panes.byKey = nil
	}
	l.panes.slots.forget()
}

// growCap returns s with room for need elements: s itself when it has it,
// else a copy with at least twice s's capacity, so that a buffer grown by
// successive reservations is copied O(log n) times.
func growCap[T any](s []T, need int) []T {
	if need <= cap(s) {
		return s
	}
	return slices.Grow(s, max(need, 2*cap(s))-len(s))
}

// growTo extends s to n elements (new ones zero).
func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		t := s[:n]
		clear(t[len(s):])
		return t
	}
	t := make([]T, n, max(n, 2*cap(s)))
	copy(t, s)
	return t
}
