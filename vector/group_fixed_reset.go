package vector

import "math/bits"

// resetGroups drops every group of a single fixed-width key and empties
// the slots in place, so that a scratch aggregation filled and emptied
// every epoch (LiveAggregate.Reset: a sliding window's panes combined by
// their other key) keeps its table instead of growing it from the
// smallest again, rehashing every group at each doubling. As
// wordsGrouper's, the table keeps its size unless it is more than four
// times what the groups just dropped needed.
func (g *fixedGrouper) resetGroups() {
	t := g.t
	size := minTableSlots
	for 2*(t.n+1) > size {
		size *= 2
	}
	if len(t.slots) <= 4*size {
		clear(t.slots)
	} else {
		t.release() // slots mapped by an interruptible growth, if any
		t.slots = make([]groupSlot, size)
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
		t.mask = uint64(size - 1)
	}
	t.n = 0
	t.nullGid, t.nullRows = -1, 0
	t.sinceFlush = 0
	t.carry = t.carry[:0]
	g.words, g.nulls = g.words[:0], g.nulls[:0]
}
