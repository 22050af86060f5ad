package vector

import "math/bits"

// The words grouper's slot table: one word a slot, the high half of the
// key's hash (the tag) and the group + 1 (wordsSlot); the key's words are
// in the group's tuple. A slot's home is the top bits of the hash, which
// are the top bits of its tag, so that a growth places every slot from
// its word alone, without loading the tuple or hashing the key again.
//
// Why not the key's words in the slot (k+1 words a slot, until session
// 29): a probe that hits its home then decided on one cache line, but the
// table was three times the size for the usual two stored words, and a
// streaming state grows from nothing every run: q17's 10–16K groups made
// a table of 32K 24-byte slots (768 KB) by five growths, each a fresh
// table's pages faulted in (13–17 µs per 4 KiB here) and the old one
// copied through (24 % of q17's page faults). BenchmarkWordsTable shows
// what the extra load of the tuple costs a hit.

// minWordsSlots is the slot count of a new table.
const minWordsSlots = 64

// slotShift is the shift that takes a hash to its home in a table of size
// slots (a power of two, at most 1<<32: a gid has 32 bits, and the home
// must lie within the tag).
func slotShift(size int) uint { return uint(64 - bits.TrailingZeros(uint(size))) }

// setSlots makes slots (a power of two of them, zero or already filled
// for their size) the table.
func (g *wordsGrouper) setSlots(slots []uint64) {
	g.slots, g.mask, g.shift = slots, len(slots)-1, slotShift(len(slots))
}

// moveTable moves every slot into slots, an empty larger table, and makes
// it the table.
func (g *wordsGrouper) moveTable(slots []uint64) {
	moveSlots(slots, slotShift(len(slots)), g.slots)
	bigFree(&g.big, g.slots)
	g.setSlots(slots)
}

// tupleHash is the hash a stored tuple was placed with (hashStored's of
// its row).
func (g *wordsGrouper) tupleHash(t []uint64) uint64 { return tupleHash(t) &^ g.hashDrop }

// placeSlot puts slot word w (non-zero) in the first free slot of its
// chain from its home.
func placeSlot(slots []uint64, shift uint, mask int, w uint64) {
	p := int(w >> shift)
	for slots[p] != 0 {
		p = (p + 1) & mask
	}
	slots[p] = w
}

// moveSlots places the slots of the table old (or a run of its slots)
// into slots, an empty table of a larger power of two whose homes are
// w >> shift, taking them in old's order. Homes are the hash's top bits,
// so a group at old position p (its home plus its run) lands at about
// p×(growth): one ascending stream of writes that the cache and the
// prefetcher follow, and no tuple is read. Any order of insertion makes
// the same set of probe chains valid.
func moveSlots(slots []uint64, shift uint, old []uint64) {
	mask := len(slots) - 1
	for _, w := range old {
		if w == 0 {
			continue
		}
		p := int(w >> shift)
		for slots[p] != 0 {
			p = (p + 1) & mask
		}
		slots[p] = w
	}
}
