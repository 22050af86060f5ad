package stateful

import "slices"

// The key index of a join side's live state: from a join key to the
// stored rows with that key. Its entries live in a slab addressed by a
// map from the key to an int32 slot, and a key's first row reference is
// carved out of a chunk shared by the keys of one insertion, so that
// indexing a row whose key is new costs one map insertion and no
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
	slot  map[K]int32
	slab  []joinKeyRefs[K]
	free  []int32
	chunk []joinRef[K] // the rest of the current chunk of first refs
	// insertRows' scratch: each row's slot, and the refs each slot gets
	// (by slot; zero between calls).
	rowSlots, adds []int32
}

func newJoinKeyIndex[K joinKey]() joinKeyIndex[K] {
	return joinKeyIndex[K]{slot: map[K]int32{}}
}

// len is the number of keys indexed.
func (x *joinKeyIndex[K]) len() int { return len(x.slot) }

// get returns k's rows, nil when k has none. The pointer is valid until
// the next insert.
func (x *joinKeyIndex[K]) get(k K) *joinKeyRefs[K] {
	i, ok := x.slot[k]
	if !ok {
		return nil
	}
	return &x.slab[i]
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
	if i, ok := x.slot[k]; ok {
		return i, false
	}
	if n := len(x.free); n > 0 {
		i = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		i = int32(len(x.slab))
		x.slab = append(x.slab, joinKeyRefs[K]{})
	}
	x.slot[k] = i
	x.slab[i] = joinKeyRefs[K]{}
	return i, true
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
	slots := x.rowSlots[:0]
	for r := from; r < to; r++ {
		k := r - b.base
		if b.keyNull[k] {
			slots = append(slots, -1)
			continue
		}
		i, isNew := x.slotFor(b.keys[k])
		if isNew {
			bytes += joinKeyOverhead + keyBytes(b.keys[k])
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
	i, ok := x.slot[k]
	if !ok {
		return
	}
	delete(x.slot, k)
	x.slab[i] = joinKeyRefs[K]{}
	x.free = append(x.free, i)
}

// each calls fn for every key and its rows.
func (x *joinKeyIndex[K]) each(fn func(k K, kr *joinKeyRefs[K])) {
	for k, i := range x.slot {
		fn(k, &x.slab[i])
	}
}

func (x *joinKeyIndex[K]) release() {
	*x = joinKeyIndex[K]{}
}
