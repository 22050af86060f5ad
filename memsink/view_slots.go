package memsink

import "slices"

// slotPageBits sizes a page of a view's slots: 4096 locs (32 KiB).
const slotPageBits = 12

const slotPageLen = 1 << slotPageBits

// slotPages is a view's slots (slots[id] is where key id's live row is)
// in fixed-size pages. A view gains keys every epoch; one slice grown by
// doubling allocated about twice its final size over its life, every
// doubling fresh memory plus a copy of all the slots so far. Pages are
// allocated once each and never copied; only the first grows (by
// doubling, up to a page), so that a small view does not hold a whole
// page.
type slotPages struct {
	pages [][]loc
	n     int // slots in use
}

// len is the number of slots.
func (t *slotPages) len() int { return t.n }

// at returns slot s.
func (t *slotPages) at(s int32) loc {
	return t.pages[s>>slotPageBits][s&(slotPageLen-1)]
}

// set makes slot s l.
func (t *slotPages) set(s int32, l loc) {
	t.pages[s>>slotPageBits][s&(slotPageLen-1)] = l
}

// extend adds slots, each noChunk, until there are n.
func (t *slotPages) extend(n int) {
	for t.n < n {
		p := t.n >> slotPageBits
		if p == len(t.pages) {
			c := slotPageLen
			if p == 0 {
				c = min(n, slotPageLen)
			}
			t.pages = append(t.pages, make([]loc, 0, c))
		}
		pg := t.pages[p]
		k := min(slotPageLen-len(pg), n-t.n)
		pg = slices.Grow(pg, k)
		for range k {
			pg = append(pg, loc{chunk: noChunk})
		}
		t.pages[p] = pg
		t.n += k
	}
}

// reset drops every slot.
func (t *slotPages) reset() { *t = slotPages{} }
