package stateful

import (
	"hash/maphash"
	"unsafe"

	"github.com/arrowstream/arrowstream/vector"
)

// An epoch's new rows of one side chained by key, for the rows of the
// other side to probe: the new rows against each other (newPairs) and
// against stored batches not indexed yet (scanPending). It was a Go map
// from the key to its first row, made for every partition and probe; it
// is now the key index's open-addressing table (vector.WordMap) kept by
// the partition and cleared for the next probe, so a warm partition
// allocates nothing to hash its rows.

// joinKeyWords gives a join key its word in a vector.WordMap: a fixed
// key is its own word, a byte key's word is its hash (seed made by
// newJoinKeyWords).
type joinKeyWords[K joinKey] struct {
	seed maphash.Seed
}

func newJoinKeyWords[K joinKey]() joinKeyWords[K] {
	return joinKeyWords[K]{seed: maphash.MakeSeed()}
}

// isFixed tells whether K is uint64. joinKey is exactly uint64 or string,
// so the size tells which K is (a type switch on any(k) would box the
// key); a constant of each instantiation.
func isFixed[K joinKey]() bool {
	var zero K
	return unsafe.Sizeof(zero) == unsafe.Sizeof(uint64(0))
}

// fixed tells whether keys are their own words.
func (kw joinKeyWords[K]) fixed() bool { return isFixed[K]() }

// word is k's word.
func (kw joinKeyWords[K]) word(k K) uint64 {
	if isFixed[K]() {
		return *(*uint64)(unsafe.Pointer(&k))
	}
	return maphash.String(kw.seed, *(*string)(unsafe.Pointer(&k)))
}

// words views fixed keys as their words (K must be uint64).
func fixedWords[K joinKey](keys []K) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(keys))), len(keys))
}

// joinRowHash chains rows by key: first(k) is the first row with key k,
// next[j] the row after j with j's key (-1: none), rows ascending.
type joinRowHash[K joinKey] struct {
	joinKeyWords[K]
	heads vector.WordMap // a key's word → its chain's first row
	keys  []K            // the rows chained (borrowed until the next build)
	next  []int32
	tail  []int32 // build's scratch: by a chain's first row, its last
}

func newJoinRowHash[K joinKey]() *joinRowHash[K] {
	return &joinRowHash[K]{joinKeyWords: newJoinKeyWords[K]()}
}

// build chains the rows of keys that can match (not null, not excluded),
// replacing what the hash held.
func (h *joinRowHash[K]) build(keys []K, keyNull, excluded []bool) {
	// A table and chains grown for an outsized probe are dropped, not
	// cleared and kept for every probe after it.
	if h.heads.HeapBytes() > 64*int64(len(keys))+4096 {
		h.heads.Reset()
	} else {
		h.heads.Clear()
	}
	if cap(h.next) > maxKeptHeads && len(keys) < cap(h.next)/2 {
		h.next, h.tail = nil, nil
	}
	h.keys = keys
	h.next = resizeInt32(h.next, len(keys))
	h.tail = resizeInt32(h.tail, len(keys))
	h.heads.Reserve(len(keys))
	for j, k := range keys {
		h.next[j] = -1
		if keyNull[j] || excluded[j] {
			continue
		}
		f := int32(j)
		if h.fixed() {
			f, _ = h.heads.FindOrAdd(h.word(k), int32(j))
		} else if f = h.first(k); f < 0 {
			f = int32(j)
			h.heads.Add(h.word(k), f)
		}
		if f != int32(j) {
			h.next[h.tail[f]] = int32(j)
		}
		h.tail[f] = int32(j)
	}
}

// first returns the first row with key k, -1 for none.
func (h *joinRowHash[K]) first(k K) int32 {
	w := h.word(k)
	if h.fixed() {
		return h.heads.Find(w)
	}
	it := h.heads.Probe(w)
	for j := it.Next(); j >= 0; j = it.Next() {
		if h.keys[j] == k {
			return j
		}
	}
	return -1
}

// firstAll writes the first row with each key of keys to out (-1: none,
// or a null key), fixed keys probed as one column.
func (h *joinRowHash[K]) firstAll(keys []K, keyNull []bool, out []int32) {
	if h.fixed() {
		h.heads.FindAll(fixedWords(keys), keyNull, out)
		return
	}
	for i, k := range keys {
		out[i] = -1
		if !keyNull[i] {
			out[i] = h.first(k)
		}
	}
}

// resizeInt32 returns s with length n, reusing its array when it is large
// enough.
func resizeInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, scratchCap(n))
	}
	return s[:n]
}
