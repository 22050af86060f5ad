package stateful

// The changed groups in id order. An epoch notes its changed groups
// (aggLive.dirty) in order of their first change, which for a windowed
// aggregation interleaves the groups of the new window (high ids) with
// those of the windows before (low ids, in no order). Logging them reads,
// per group, its kept store key (storeKeys: an arena in id order) and its
// accumulators (arrays by id): in first-change order those reads jump
// about memory that is larger than the core's cache, a miss per group
// (copying the kept keys was a quarter of the changelog's time). In id
// order they run forward through both. The changelog's entries are
// distinct keys, so their order within an epoch does not matter to the
// state; only the log path reorders (Update mode's output rows keep the
// first-change order, read before).

// sortDirtyMin is the fewest changed groups worth putting in id order:
// below it the reads fit in cache anyway.
const sortDirtyMin = 1024

// sortDirty puts dirty (and added with it) in ascending group id order.
// The changed groups are those stamped with this epoch (touched), so they
// are found by one forward pass over the stamps, and the added flags are
// carried over by a bitmap by group; both cost O(groups), which is done
// only when the changed groups are at least a sixteenth of them (else
// the order is left: a few scattered groups gain nothing from it).
func (l *aggLive) sortDirty() {
	n := len(l.dirty)
	if n < sortDirtyMin || 16*n < len(l.touched) || sortedIDs(l.dirty) {
		return
	}
	words := (len(l.touched) + 63) / 64
	l.addedBits = growTo(l.addedBits[:0], words)
	clear(l.addedBits)
	for i, g := range l.dirty {
		if l.added[i] {
			l.addedBits[g/64] |= 1 << (g % 64)
		}
	}
	dirty, added := l.dirty[:0], l.added[:0]
	stamp := l.stamp
	for g, t := range l.touched {
		if t != stamp {
			continue
		}
		dirty = append(dirty, int32(g))
		added = append(added, l.addedBits[g/64]&(1<<(g%64)) != 0)
	}
	l.dirty, l.added = dirty, added
}

// sortedIDs reports whether ids ascend.
func sortedIDs(ids []int32) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] < ids[i-1] {
			return false
		}
	}
	return true
}
