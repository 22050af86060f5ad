package stateful

import "strings"

// Key ranges of a join side's pending batches. A pending batch (not in
// the key index yet, stateful_join_scan.go) is scanned by every probe and
// indexed once scanned joinScanLimit times; a side that never evicts and
// is seldom matched so paid the index for every row it stores (Nexmark
// q4's bids: each indexed after 4 scans, 0.56 ms of a 2.9 ms epoch, most
// of it fresh pages of links, key slots and table growth, session 36).
// Yet the keys such a side is probed with often move on with time, as
// ids do: q4's and q20's new auctions have ids above those every stored
// bid names (a bid names an auction that exists, or one of the next
// few). So a pending batch keeps the least and greatest of its keys (a
// zone map, as columnar files keep per block), and a probe whose keys all
// lie outside that range passes the batch over: no scan, and not counted
// as one, so a batch no probe reaches stays pending (and unindexed) for
// ever at the cost of two comparisons a probe. Any order of the keys
// would do, as long as it is one order: words compare as unsigned, byte
// keys as strings.

// keyRange is the least and greatest of some non-null keys; ok is false
// for no key.
type keyRange[K joinKey] struct {
	lo, hi K
	ok     bool
}

// widen adds k to r.
func (r *keyRange[K]) widen(k K) {
	switch {
	case !r.ok:
		r.lo, r.hi, r.ok = k, k, true
	case k < r.lo:
		r.lo = k
	case k > r.hi:
		r.hi = k
	}
}

// union adds o's keys to r.
func (r *keyRange[K]) union(o keyRange[K]) {
	if o.ok {
		r.widen(o.lo)
		r.widen(o.hi)
	}
}

// meets tells whether r and o may hold a common key.
func (r keyRange[K]) meets(o keyRange[K]) bool {
	return r.ok && o.ok && r.lo <= o.hi && o.lo <= r.hi
}

// rangeOf is the range of keys whose rows are neither null nor excluded
// (excluded may be nil).
func rangeOf[K joinKey](keys []K, null, excluded []bool) keyRange[K] {
	var r keyRange[K]
	for j, k := range keys {
		if null[j] || (excluded != nil && excluded[j]) {
			continue
		}
		r.widen(k)
	}
	return r
}

// setZone sets b's zone to the range of its live rows' keys, unless it has
// one (buildJoinBatch sets it from the epoch's keys). A byte key's
// bounds are copied: they must not hold the memory of a key slice.
func (s *joinSideLive[K]) setZone(b *joinBatch[K]) {
	if b.zone.ok || b.rec == nil || b.cursor >= b.end {
		return
	}
	keys, null := b.keySpan(b.cursor-b.base, b.end-b.base, &s.index.keyBuf, &s.index.nullBuf)
	b.zone = rangeOf(keys, null, nil)
	b.zone.lo, b.zone.hi = cloneKey(b.zone.lo), cloneKey(b.zone.hi)
}

// cloneKey copies a byte key's bytes (a word is returned as it is).
func cloneKey[K joinKey](k K) K {
	if s, ok := any(k).(string); ok {
		return any(strings.Clone(s)).(K)
	}
	return k
}

// zoneBytes is the heap bytes of b's zone's bounds.
func (b *joinBatch[K]) zoneBytes() int64 {
	if !b.zone.ok {
		return 0
	}
	return keyBytes(b.zone.lo) + keyBytes(b.zone.hi)
}
