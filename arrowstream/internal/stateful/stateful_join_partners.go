package stateful

import (
	"github.com/arrowstream/arrowstream/vector"
)

// A new row the join will not store (sideRows.unstored) matters only
// through the pairs it makes this epoch; when the other side has no row
// with its key, stored or new, it makes none, so it is dropped before the
// split by partition copies it (an inner join: no row is emitted with
// nulls, no matched flag is kept). In Nexmark q7 nearly every bid is such
// a row: the split's copy of every bid was the largest cost left once the
// bids were no longer stored.

// dropUnpartnered removes from r (side i) its unstored rows whose key
// no row of the other side has: other (the other side's new rows) nor
// the other side's live state. A row whose key may be there is kept.
func (s *statefulJoin) dropUnpartnered(i int, r, other *sideRows) error {
	if r.unstored == nil || r.rec.NumRows() == 0 {
		return nil
	}
	var keep []int32
	if s.fixedKeys {
		keep = unpartneredKeep(s, i, r, r.words, other.words, other, func(jp *joinPart) *joinLivePart[uint64] { return jp.words })
	} else {
		keep = unpartneredKeep(s, i, r, r.keys, other.keys, other, func(jp *joinPart) *joinLivePart[string] { return jp.strs })
	}
	if keep == nil {
		return nil
	}
	rec, err := vector.TakeRecord(s.mem, r.rec, keep)
	if err != nil {
		return err
	}
	r.rec.Release()
	r.rec = rec
	r.keyNull, r.hashes = pick(r.keyNull, keep), pick(r.hashes, keep)
	r.excluded, r.unstored = pick(r.excluded, keep), pick(r.unstored, keep)
	if r.words != nil {
		r.words = pick(r.words, keep)
	} else {
		r.keys = pick(r.keys, keep)
	}
	return nil
}

// unpartneredKeep returns the rows of r to keep, nil when every row is
// kept.
func unpartneredKeep[K joinKey](s *statefulJoin, i int, r *sideRows, keys, otherKeys []K, other *sideRows, live func(*joinPart) *joinLivePart[K]) []int32 {
	o := 1 - i
	fresh := make(map[K]struct{}, len(otherKeys))
	for j, k := range otherKeys {
		if !other.keyNull[j] && !other.excluded[j] {
			fresh[k] = struct{}{}
		}
	}
	n := len(s.parts)
	// pending[p]: the keys of partition p's other-side batches that are
	// not indexed yet (made when a row of p asks).
	pending := make([]map[K]struct{}, n)
	partner := func(j int) bool {
		k := keys[j]
		if _, ok := fresh[k]; ok {
			return true
		}
		if n == 0 {
			return false
		}
		p := s.state.scheme.partition(r.hashes[j], n)
		lp := live(s.parts[p])
		if lp == nil || lp.sides[o] == nil {
			return true // no live state to ask: keep the row
		}
		side := lp.sides[o]
		if side.index.get(k) != nil {
			return true
		}
		if pending[p] == nil {
			pending[p] = map[K]struct{}{}
			for _, b := range side.pending {
				if b.rec == nil {
					continue
				}
				for _, pk := range b.keys[b.cursor-b.base : b.end-b.base] {
					pending[p][pk] = struct{}{}
				}
			}
		}
		_, ok := pending[p][k]
		return ok
	}
	keep := make([]int32, 0, len(keys))
	for j := range keys {
		if !r.unstored[j] || partner(j) {
			keep = append(keep, int32(j))
		}
	}
	if len(keep) == len(keys) {
		return nil
	}
	return keep
}

// pick returns xs at rows.
func pick[T any](xs []T, rows []int32) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(rows))
	for k, j := range rows {
		out[k] = xs[j]
	}
	return out
}
