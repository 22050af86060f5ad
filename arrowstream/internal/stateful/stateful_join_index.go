package stateful

import (
	"slices"

	"github.com/arrowstream/arrowstream/vector"
)

// The key index of a join side's live state: from a join key to the
// stored rows with that key. Its entries live in a slab addressed by an
// open-addressing table from the key's word to an int32 slot
// (vector.WordMap; it was a Go map, probed a key at a time through the
// runtime's generic map code), and a key's first row reference is
// carved out of a chunk shared by the keys of one insertion, so that
// indexing a row whose key is new costs one table insertion and no
// allocation of its own (a map of pointers to a struct per key holding
// its own slice cost an object and a slice per key, and a map the
// garbage collector scans: about half the join's CPU in Nexmark q7,
// whose keys are nearly unique). Slots of removed keys are reused.
//
// A key's second reference moves its refs to a joinRefSmall-ref piece
// carved from the same chunks, so that a key with a few rows (an auction's
// first bids in Nexmark q4) costs no allocation of its own either; only
// beyond joinRefSmall do its refs grow on the heap by append's growth
// (it had allocated 2, then 4 refs per key: most of the join's allocated
// bytes in q4). A batch is indexed by insertRows, which counts each key's
// rows in the batch first, so that a key's refs grow at most once a batch
// (its per-slot count scratch, 4 bytes a slot, is not in the side's bytes).

const (
	// joinRefChunk is how many references one allocation holds.
	joinRefChunk = 256
	// joinRefSmall is the capacity of a key's second piece.
	joinRefSmall = 4
)

// joinKeyIndex maps a join key to its rows.
type joinKeyIndex[K joinKey] struct {
	// words maps a key's word (keyWord) to its slot: the vector package's
	// open-addressing table (vector.WordMap), not a Go map, so that a
	// batch of keys is probed column-wise and the collector has no map to
	// scan. A byte key's word is its hash, so several slots may share
	// one, told apart by the key kept in the slot.
	words vector.WordMap
	joinKeyWords[K]
	slab  []joinKeyRefs[K]
	free  []int32
	chunk []joinRef[K] // the rest of the current chunk of first refs
	// insertRows' scratch: each row's slot, and the refs each slot gets
	// (by slot; zero between calls).
	rowSlots, adds []int32
	found          []int32 // findAll's scratch (probe)
}

func newJoinKeyIndex[K joinKey]() joinKeyIndex[K] {
	return joinKeyIndex[K]{joinKeyWords: newJoinKeyWords[K]()}
}

// len is the number of keys indexed.
func (x *joinKeyIndex[K]) len() int { return x.words.Len() }

// find returns k's slot, -1 when k is not indexed.
func (x *joinKeyIndex[K]) find(k K) int32 {
	w := x.word(k)
	if x.fixed() {
		return x.words.Find(w)
	}
	it := x.words.Probe(w)
	for i := it.Next(); i >= 0; i = it.Next() {
		if x.slab[i].key == k {
			return i
		}
	}
	return -1
}

// findAll returns the slot of every key of keys (-1: not indexed, or a
// null key), in a scratch slice valid until the next call. Fixed keys are
// probed as one column (vector.WordMap.FindAll).
func (x *joinKeyIndex[K]) findAll(keys []K, null []bool) []int32 {
	ids := slices.Grow(x.found[:0], len(keys))[:len(keys)]
	x.found = ids
	if x.fixed() {
		x.words.FindAll(fixedWords(keys), null, ids)
		return ids
	}
	for j, k := range keys {
		ids[j] = -1
		if !null[j] {
			ids[j] = x.find(k)
		}
	}
	return ids
}

// get returns k's rows, nil when k has none. The pointer is valid until
// the next insert.
func (x *joinKeyIndex[K]) get(k K) *joinKeyRefs[K] {
	if i := x.find(k); i >= 0 {
		return &x.slab[i]
	}
	return nil
}

// insert adds ref to k's rows and counts it live, telling whether k was
// not indexed before.
func (x *joinKeyIndex[K]) insert(k K, ref joinRef[K]) (fresh bool) {
	i, fresh := x.slotFor(k)
	x.reserve(i, 1)
	kr := &x.slab[i]
	kr.refs = append(kr.refs, ref)
	kr.live++
	return fresh
}

// slotFor returns k's slot, making an empty one (no refs) when k is not
// indexed (fresh).
func (x *joinKeyIndex[K]) slotFor(k K) (i int32, fresh bool) {
	// The slot k gets if it is new: the last freed, else the next.
	next := int32(len(x.slab))
	if n := len(x.free); n > 0 {
		next = x.free[n-1]
	}
	if x.fixed() {
		// One walk of the key's probe run finds or adds it.
		if i, fresh = x.words.FindOrAdd(x.word(k), next); !fresh {
			return i, false
		}
	} else {
		if i := x.find(k); i >= 0 {
			return i, false
		}
		x.words.Add(x.word(k), next)
	}
	if n := len(x.free); n > 0 {
		x.free = x.free[:n-1]
	} else {
		x.slab = append(x.slab, joinKeyRefs[K]{})
	}
	x.slab[next] = joinKeyRefs[K]{key: k}
	return next, true
}

// reserve makes room for c more refs of slot i in one step: a key's first
// ref in a one-ref piece, up to joinRefSmall in a carved piece, beyond on
// the heap, grown once by at least c (append's growth).
func (x *joinKeyIndex[K]) reserve(i int32, c int) {
	kr := &x.slab[i]
	n := len(kr.refs)
	switch need := n + c; {
	case need <= cap(kr.refs):
	case need == 1:
		kr.refs = x.carve(1)[:0]
	case need <= joinRefSmall:
		kr.refs = append(x.carve(joinRefSmall)[:0], kr.refs...)
	default:
		kr.refs = slices.Grow(kr.refs, c)
	}
}

// insertRows adds the rows [from, to) of b whose keys are not null,
// counting them live: each key's refs grow at most once for the batch
// (a key with many rows in it, Nexmark q4's hot auctions with hundreds of
// bids an epoch, had its refs copied at every doubling). It returns the
// approximate heap bytes it added (joinKeyOverhead and the key's bytes
// for each key indexed first, joinRefBytes a ref).
func (x *joinKeyIndex[K]) insertRows(b *joinBatch[K], from, to int32) (bytes int64) {
	lo, hi := from-b.base, to-b.base
	// The keys already indexed are found as a column; a row whose key is
	// not (or was made by an earlier row of the batch) looks again.
	found := x.findAll(b.keys[lo:hi], b.keyNull[lo:hi])
	slots := x.rowSlots[:0]
	for j, i := range found {
		k := lo + int32(j)
		if b.keyNull[k] {
			slots = append(slots, -1)
			continue
		}
		if i < 0 {
			var isNew bool
			if i, isNew = x.slotFor(b.keys[k]); isNew {
				bytes += joinKeyOverhead + keyBytes(b.keys[k])
			}
		}
		bytes += joinRefBytes
		if int(i) >= len(x.adds) {
			x.adds = append(x.adds, make([]int32, int(i)+1-len(x.adds))...)
		}
		x.adds[i]++
		slots = append(slots, i)
	}
	for _, i := range slots {
		if i >= 0 && x.adds[i] > 0 {
			x.reserve(i, int(x.adds[i]))
			x.adds[i] = 0
		}
	}
	for j, i := range slots {
		if i < 0 {
			continue
		}
		kr := &x.slab[i]
		kr.refs = append(kr.refs, joinRef[K]{b, from + int32(j)})
		kr.live++
	}
	x.rowSlots = slots
	if cap(slots) > maxKeptHeads {
		x.rowSlots = nil // an outsized batch's scratch is not kept
	}
	return bytes
}

// carve returns n zeroed refs (len and cap n) from the current chunk,
// starting a new chunk when it has fewer left. A piece's capacity ends
// where it does, so appending past it never writes into a neighbour.
func (x *joinKeyIndex[K]) carve(n int) []joinRef[K] {
	if len(x.chunk) < n {
		x.chunk = make([]joinRef[K], joinRefChunk)
	}
	p := x.chunk[:n:n]
	x.chunk = x.chunk[n:]
	return p
}

// remove drops k (its rows are all evicted).
func (x *joinKeyIndex[K]) remove(k K) {
	i := x.find(k)
	if i < 0 {
		return
	}
	x.words.Remove(x.word(k), i)
	x.slab[i] = joinKeyRefs[K]{}
	x.free = append(x.free, i)
}

// each calls fn for every key and its rows.
func (x *joinKeyIndex[K]) each(fn func(k K, kr *joinKeyRefs[K])) {
	x.words.Each(func(_ uint64, i int32) {
		fn(x.slab[i].key, &x.slab[i])
	})
}

// release drops the keys (the index stays usable, its hash seed kept).
func (x *joinKeyIndex[K]) release() {
	*x = joinKeyIndex[K]{joinKeyWords: x.joinKeyWords}
}
