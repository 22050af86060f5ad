package stateful

// A view of the key index for tests: a key's chain as (batch, row) refs.

// joinRef is a row of a key's chain: its batch (nil: a batch that left
// the index) and its row number there.
type joinRef[K joinKey] struct {
	b   *joinBatch[K]
	row int32
}

func (r joinRef[K]) alive() bool { return r.b != nil && r.row >= r.b.cursor }

// joinKeyRefs is a key's chain, in order, and its live count.
type joinKeyRefs[K joinKey] struct {
	key  K
	refs []joinRef[K]
	live int32
}

// get returns k's chain, nil when k is not indexed.
func (x *joinKeyIndex[K]) get(k K) *joinKeyRefs[K] {
	i := x.find(k)
	if i < 0 {
		return nil
	}
	s := x.slab.at(i)
	kr := &joinKeyRefs[K]{key: k, live: s.live}
	for g := s.head; g >= 0; g = x.links.at(g) {
		b, row := x.locate(g)
		kr.refs = append(kr.refs, joinRef[K]{b, row})
	}
	return kr
}
