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

// joinRefChunk is how many first references one allocation holds.
const joinRefChunk = 256

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
	if len(x.chunk) == 0 {
		x.chunk = make([]joinRef[K], joinRefChunk)
	}
	x.chunk[0] = ref
	x.slab[i] = joinKeyRefs[K]{refs: x.chunk[:1:1], live: 1}
	x.chunk = x.chunk[1:]
	return true
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
