package stateful

// Deferred indexing of a join side's stored rows. Indexing a row costs a
// hash-map insertion and, when the row is evicted, a deletion: random
// accesses of a map as large as the state, a few hundred nanoseconds a
// row once the map outgrows the caches. A side whose rows are probed
// rarely, or by few keys, pays that for nothing: in Nexmark q7 every bid
// is stored to meet one window-maximum row per window, and the index was
// half of the join's CPU. So a new batch is not indexed at once: a probe
// with few keys scans its rows instead, looking each up in a small hash
// of the probe's keys behind a bit filter of them (cache-resident, about
// 2 ns a row against 0.6–2 µs to index and unindex one), and the
// side indexes its pending batches when a probe brings many keys (the
// scan would cost as much as indexing) or once the oldest of them has
// been scanned joinScanLimit times (a side probed every epoch, as q20's
// bids, stops being scanned: its cost stays in proportion to the input,
// not to the state). A row is so scanned at most joinScanLimit times. A
// probe whose keys all lie outside a batch's key range does not scan it
// nor count (stateful_join_zone.go): a batch that probes pass over stays
// pending, and is indexed only with the others when one of them is due.

const (
	// joinScanLimit is how many probes scan a batch before it is indexed.
	joinScanLimit = 4
	// joinScanRatio: a probe of n keys indexes the pending batches first
	// when n×joinScanRatio ≥ their live rows.
	joinScanRatio = 8
)

// pendingLive is the live rows of the side's pending batches.
func (s *joinSideLive[K]) pendingLive() int64 {
	var n int64
	for _, b := range s.pending {
		if b.rec != nil {
			n += int64(b.live())
		}
	}
	return n
}

// scanFilterBits is the size of the bit filter of a probe's fixed-width
// keys (a power of two): a stored row whose key's bit is clear is passed
// over without a map lookup, most rows when the probe has few keys.
const scanFilterBits = 1 << 12

// scanFilter is the bit filter of the keys rh chains; nil for keys that
// are not words (their bytes would need hashing: the hash is asked
// directly).
func scanFilter[K joinKey](rh *joinRowHash[K]) []uint64 {
	if !rh.fixed() {
		return nil
	}
	bits := make([]uint64, scanFilterBits/64)
	rh.heads.Each(func(k uint64, _ int32) {
		h := scanBit(k)
		bits[h/64] |= 1 << (h % 64)
	})
	return bits
}

// scanBit is a word's bit in a scanFilter (Fibonacci hashing: the high
// bits of the product mix every bit of the key).
func scanBit(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> (64 - 12) }

// scanPending adds to segs the candidate pairs of new rows of side i
// (rh: their rows chained by key; probe: the range of their keys) with
// the live rows of the other side's pending batches, one segment per
// batch, and counts the scan of each batch whose key range meets probe's
// (the others hold none of its keys: passed over, not counted).
func scanPending[K joinKey](other *joinSideLive[K], i int, rh *joinRowHash[K], probe keyRange[K], segs []*joinPairs[K]) []*joinPairs[K] {
	var bits []uint64
	next := rh.next
	for _, b := range other.pending {
		if b.rec == nil || b.indexed || !b.zone.meets(probe) {
			continue
		}
		if bits == nil {
			bits = scanFilter(rh)
		}
		b.scans++
		sg := &joinPairs[K]{}
		lo := b.cursor - b.base
		keys, keyNull := b.keySpan(lo, b.end-b.base, &other.index.keyBuf, &other.index.nullBuf)
		words, _ := any(keys).([]uint64)
		for r := b.cursor; r < b.end; r++ {
			k, q := r-b.base, r-b.cursor
			if keyNull[q] {
				continue
			}
			if bits != nil {
				if h := scanBit(words[q]); bits[h/64]&(1<<(h%64)) == 0 {
					continue
				}
			}
			h := rh.first(keys[q])
			if h < 0 {
				continue
			}
			for j := h; j >= 0; j = next[j] {
				if i == 0 {
					sg.li, sg.ri = append(sg.li, j), append(sg.ri, k)
				} else {
					sg.li, sg.ri = append(sg.li, k), append(sg.ri, j)
				}
			}
		}
		if len(sg.li) > 0 {
			if i == 0 {
				sg.r = b
			} else {
				sg.l = b
			}
			segs = append(segs, sg)
		}
	}
	return segs
}

// settlePending indexes the side's pending batches when one of them has
// been scanned joinScanLimit times: all of them, in the order they were
// added (the key index numbers rows in that order, which a merge relies
// on), though older ones that probes passed over were scanned less.
func (s *joinSideLive[K]) settlePending() error {
	waiting := false
	for _, b := range s.pending {
		if b.rec == nil || b.indexed {
			continue
		}
		if b.scans >= joinScanLimit {
			return s.indexPending()
		}
		waiting = true
	}
	if !waiting {
		// Every pending batch was dropped or indexed.
		clear(s.pending)
		s.pending = s.pending[:0]
	}
	return nil
}
