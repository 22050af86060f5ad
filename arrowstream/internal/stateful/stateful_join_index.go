package stateful

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
// beyond joinRefSmall do its refs grow on the heap by append's doubling
// (it had allocated 2, then 4 refs per key: most of the join's allocated
// bytes in q4).

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
	if i, ok := x.slot[k]; ok {
		kr := &x.slab[i]
		if n := len(kr.refs); n == cap(kr.refs) && n < joinRefSmall {
			kr.refs = append(x.carve(joinRefSmall)[:0], kr.refs...)
		}
		kr.refs = append(kr.refs, ref)
		kr.live++
		return false
	}
	var i int32
	if n := len(x.free); n > 0 {
		i = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		i = int32(len(x.slab))
		x.slab = append(x.slab, joinKeyRefs[K]{})
	}
	x.slot[k] = i
	refs := x.carve(1)
	refs[0] = ref
	x.slab[i] = joinKeyRefs[K]{refs: refs, live: 1}
	return true
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
