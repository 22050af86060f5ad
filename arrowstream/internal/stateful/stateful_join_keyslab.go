package stateful

import "math/bits"

// joinKeySlab holds a key index's slots (joinKeySlot) by number in pages
// that never move: page k holds keySlabFirst<<k slots, so the slab grows
// by allocating its next page, about as large as all before it, and
// copies nothing. Grown by append, the slots were copied at every growth
// and each dropped copy was memory first touched in the epoch: a third of
// the key index's allocations in q3 (docs/performance.md, "The join's key
// index: its slots in pages").
type joinKeySlab[K joinKey] struct {
	pages [][]joinKeySlot[K]
	n     int32 // slots in use, numbered 0 to n-1
}

// keySlabShift is log2 of the first page's slots (keySlabFirst).
const keySlabShift = 4

const keySlabFirst = 1 << keySlabShift

// slabPage returns the page and offset of slot number i: with u = i +
// keySlabFirst, page k starts at keySlabFirst<<k - keySlabFirst, so k is
// u's highest bit less keySlabShift.
func slabPage(i int32) (k int, off uint32) {
	u := uint32(i) + keySlabFirst
	k = bits.Len32(u) - 1 - keySlabShift
	return k, u - keySlabFirst<<k
}

// at returns slot number i (0 <= i < len).
func (s *joinKeySlab[K]) at(i int32) *joinKeySlot[K] {
	k, off := slabPage(i)
	return &s.pages[k][off]
}

// len is the number of slots numbered.
func (s *joinKeySlab[K]) len() int32 { return s.n }

// grow numbers one more slot (zero), allocating a page when the last is
// full, and returns its number.
func (s *joinKeySlab[K]) grow() int32 {
	i := s.n
	if k, _ := slabPage(i); k == len(s.pages) {
		s.pages = append(s.pages, make([]joinKeySlot[K], keySlabFirst<<k))
	}
	s.n++
	return i
}
