package stateful

import (
	"context"

	"github.com/arrowstream/arrowstream/vector"
)

// A new row the join will not store (sideRows.unstored) matters only
// through the pairs it makes this epoch; when the other side has no row
// with its key, stored or new, it makes none, so it is dropped before the
// split by partition copies it (an inner join: no row is emitted with
// nulls, no matched flag is kept). In Nexmark q7 nearly every bid is such
// a row: the split's copy of every bid was the largest cost left once the
// bids were no longer stored.

// dropUnpartnered encodes the keys of r (side i, marked by the max
// bound, its keys not encoded yet) and removes its unstored rows whose key
// no row of the other side has: other (the other side's new rows) nor
// the other side's live state. A row whose key may be there is kept.
//
// When most rows are unstored and the other side holds few rows (q7: a
// window maximum or two against 10K bids an epoch), the keys are encoded
// without their partition hashes and looked up in one set of all the
// other side's keys; only the rows kept are hashed (their keys encoded
// again). Otherwise the rows are hashed first and each asks the other
// side's partition of its key.
func (s *statefulJoin) dropUnpartnered(ctx context.Context, i int, r, other *sideRows) error {
	side := s.sides[i]
	n := int(r.rec.NumRows())
	unstored := 0
	for _, u := range r.unstored {
		if u {
			unstored++
		}
	}
	if n == 0 || unstored == 0 {
		return s.encodeNewKeys(ctx, side, r)
	}
	var keep []int32
	few := unstored*2 >= n
	if few {
		if s.fixedKeys {
			few = otherSideRows(s, 1-i, other.words, func(jp *joinPart) *joinLivePart[uint64] { return jp.words }) < int64(unstored)
		} else {
			few = otherSideRows(s, 1-i, other.keys, func(jp *joinPart) *joinLivePart[string] { return jp.strs }) < int64(unstored)
		}
	}
	fast := false
	var set map[uint64]struct{}
	if few && s.fixedKeys {
		// One integral key: the rows asked from its column's values
		// (fixedPartneredKeep), the rows kept encoded below.
		set = otherKeySet(s, 1-i, other.words, other, func(jp *joinPart) *joinLivePart[uint64] { return jp.words })
		var err error
		if keep, fast, err = s.fixedPartneredKeep(ctx, i, r, set); err != nil {
			return err
		}
	}
	if !fast {
		if err := s.encodeNewKeysHashing(ctx, side, r, !few); err != nil {
			return err
		}
	}
	switch {
	case fast:
	case few && s.fixedKeys:
		keep = partneredKeep(r, r.words, set)
	case few:
		keep = partneredKeep(r, r.keys, otherKeySet(s, 1-i, other.keys, other, func(jp *joinPart) *joinLivePart[string] { return jp.strs }))
	case s.fixedKeys:
		keep = unpartneredKeep(s, i, r, r.words, other.words, other, func(jp *joinPart) *joinLivePart[uint64] { return jp.words })
	default:
		keep = unpartneredKeep(s, i, r, r.keys, other.keys, other, func(jp *joinPart) *joinLivePart[string] { return jp.strs })
	}
	if keep != nil {
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
	}
	if r.hashes == nil {
		// The rows kept, hashed: their keys encoded again with the hashes.
		return s.encodeNewKeys(ctx, side, r)
	}
	return nil
}

// otherSideRows is how many rows side o holds, new (otherKeys) and live
// in every partition; more than any count when a partition has no live
// state to count (unpartneredKeep then keeps its rows).
func otherSideRows[K joinKey](s *statefulJoin, o int, otherKeys []K, live func(*joinPart) *joinLivePart[K]) int64 {
	n := int64(len(otherKeys))
	for _, jp := range s.parts {
		lp := live(jp)
		if lp == nil || lp.sides[o] == nil {
			return 1 << 62
		}
		n += lp.sides[o].rows
	}
	return n
}

// otherKeySet is the set of keys of side o's rows that can match: its new
// rows (other, not null nor excluded) and the live rows of its batches in
// every partition (pending or indexed).
func otherKeySet[K joinKey](s *statefulJoin, o int, otherKeys []K, other *sideRows, live func(*joinPart) *joinLivePart[K]) map[K]struct{} {
	set := make(map[K]struct{}, len(otherKeys))
	for j, k := range otherKeys {
		if !other.keyNull[j] && !other.excluded[j] {
			set[k] = struct{}{}
		}
	}
	var kb []K
	var nb []bool
	for _, jp := range s.parts {
		for _, b := range live(jp).sides[o].batches {
			if b.rec == nil {
				continue
			}
			keys, keyNull := b.keySpan(b.cursor-b.base, b.end-b.base, &kb, &nb)
			for k, key := range keys {
				if !keyNull[k] {
					set[key] = struct{}{}
				}
			}
		}
	}
	return set
}

// partneredKeep returns the rows of r to keep (stored, or their key in
// set), nil when every row is kept.
func partneredKeep[K joinKey](r *sideRows, keys []K, set map[K]struct{}) []int32 {
	keep := make([]int32, 0, len(keys))
	for j, k := range keys {
		if !r.unstored[j] {
			keep = append(keep, int32(j))
		} else if _, ok := set[k]; ok {
			keep = append(keep, int32(j))
		}
	}
	if len(keep) == len(keys) {
		return nil
	}
	return keep
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
	// spans[p]: the range of those batches' keys (stateful_join_zone.go),
	// asked first: a key outside it is in none of them.
	spans := make([]*keyRange[K], n)
	var kb []K
	var nb []bool
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
		if side.index.has(k) {
			return true
		}
		if spans[p] == nil {
			var r keyRange[K]
			for _, b := range side.pending {
				if b.rec != nil {
					r.union(b.zone)
				}
			}
			spans[p] = &r
		}
		if !spans[p].meets(keyRange[K]{lo: k, hi: k, ok: true}) {
			return false
		}
		if pending[p] == nil {
			pending[p] = map[K]struct{}{}
			for _, b := range side.pending {
				if b.rec == nil {
					continue
				}
				keys, _ := b.keySpan(b.cursor-b.base, b.end-b.base, &kb, &nb)
				for _, pk := range keys {
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
