package vector

import "unsafe"

// WordMap maps 64-bit words to int32 ids the caller chooses, with
// removal: the group tables' slots, hash and growth (hashtable.go: linear
// probing over a power-of-two array of 16-byte slots at most half full,
// doubling) for a caller that keeps its own per-key data in a slice and
// reuses the numbers of removed keys, such as a streaming join's key
// index, whose keys leave when the watermark evicts their rows.
//
// A word is either the key itself (a single fixed-width key) or the hash
// of a longer key: then several ids may share a word, Add does not look
// for an equal word, and the caller walks the candidates (Probe) and
// compares its own keys. Removal shifts the following slots of the probe
// run back (no tombstones), so a table with heavy churn does not fill up
// with dead slots. A WordMap starts without slots and is not safe for
// concurrent use.
type WordMap struct {
	t slotTable
}

// minWordMapSlots is the first table's size: a join keeps a key index per
// partition and side (hundreds), most of them small.
const minWordMapSlots = 16

// Len is the number of ids in the map.
func (m *WordMap) Len() int { return m.t.n }

// HeapBytes is the Go-heap memory of the slots.
func (m *WordMap) HeapBytes() int64 {
	return int64(len(m.t.slots)) * int64(unsafe.Sizeof(groupSlot{}))
}

// Reserve makes room for extra more ids without growing while they are
// added.
func (m *WordMap) Reserve(extra int) {
	if len(m.t.slots) == 0 {
		l := minWordMapSlots
		for 2*(m.t.n+extra) > l {
			l *= 2
		}
		m.t.rehash(l, fixedPos)
		return
	}
	if m.t.needsGrow(extra) {
		m.t.rehash(m.t.grownLen(extra), fixedPos)
	}
}

// Add maps word w to id (id ≥ 0). It does not look for w first: a
// second Add of a word adds a second id for it.
func (m *WordMap) Add(w uint64, id int32) {
	m.Reserve(1)
	t := &m.t
	p := fixedHash(w) >> t.shift
	for t.slots[p&t.mask].gid != 0 {
		p++
	}
	t.slots[p&t.mask] = groupSlot{key: w, gid: uint32(id) + 1}
	t.n++
}

// FindOrAdd returns the id of word w, mapping w to id first when it has
// none (added): one walk of w's probe run where Find and then Add take
// two. For words that are keys (one id a word).
func (m *WordMap) FindOrAdd(w uint64, id int32) (got int32, added bool) {
	m.Reserve(1)
	t := &m.t
	for p := fixedHash(w) >> t.shift; ; p++ {
		s := &t.slots[p&t.mask]
		if s.gid == 0 {
			*s = groupSlot{key: w, gid: uint32(id) + 1}
			t.n++
			return id, true
		}
		if s.key == w {
			return int32(s.gid) - 1, false
		}
	}
}

// Find returns the id of word w, -1 when it has none (the first id added
// for w, when it has several).
func (m *WordMap) Find(w uint64) int32 {
	t := &m.t
	if t.n == 0 {
		return -1
	}
	for p := fixedHash(w) >> t.shift; ; p++ {
		s := &t.slots[p&t.mask]
		if s.gid == 0 {
			return -1
		}
		if s.key == w {
			return int32(s.gid) - 1
		}
	}
}

// FindAll writes the id of every word of ws to ids (-1: none), skipping
// the rows skip flags (nil: none) with -1. As the aggregation's probe
// (probeFixed), a first pass looks only at each word's home slot, its
// loads independent so that their cache misses overlap, and a second
// pass walks the runs of the words it did not settle.
func (m *WordMap) FindAll(ws []uint64, skip []bool, ids []int32) {
	ids = ids[:len(ws)]
	t := &m.t
	if t.n == 0 {
		for i := range ids {
			ids[i] = -1
		}
		return
	}
	slots, shift, mask := t.slots, t.shift, t.mask
	var miss [probeChunk]int32
	for start := 0; start < len(ws); start += probeChunk {
		end := min(start+probeChunk, len(ws))
		chunk, out := ws[start:end], ids[start:end]
		out = out[:len(chunk)]
		nm := 0
		for j, w := range chunk {
			s := &slots[(fixedHash(w)>>shift)&mask]
			// Settled: the home slot holds w, or is empty (no id).
			settled := s.key == w || s.gid == 0
			out[j] = int32(s.gid) - 1
			miss[nm] = int32(j)
			if !settled {
				nm++
			}
		}
		for _, j := range miss[:nm] {
			out[j] = m.Find(chunk[j])
		}
		if skip != nil {
			for j, sk := range skip[start:end] {
				if sk {
					out[j] = -1
				}
			}
		}
	}
}

// WordProbe walks the ids of one word (Probe).
type WordProbe struct {
	m *WordMap
	w uint64
	p uint64
}

// Probe starts a walk over the ids added for word w.
func (m *WordMap) Probe(w uint64) WordProbe {
	return WordProbe{m: m, w: w, p: fixedHash(w) >> m.t.shift}
}

// Next returns the walk's next id, -1 at its end. The map must not change
// during the walk.
func (it *WordProbe) Next() int32 {
	t := &it.m.t
	if t.n == 0 {
		return -1
	}
	for {
		s := &t.slots[it.p&t.mask]
		if s.gid == 0 {
			return -1
		}
		it.p++
		if s.key == it.w {
			return int32(s.gid) - 1
		}
	}
}

// Remove removes the mapping of word w to id, telling whether it was
// there. The slots after it in its probe run move back over the gap when
// their home allows, so every remaining word stays reachable from its
// home without a tombstone.
func (m *WordMap) Remove(w uint64, id int32) bool {
	t := &m.t
	if t.n == 0 {
		return false
	}
	gid := uint32(id) + 1
	p := (fixedHash(w) >> t.shift) & t.mask
	for {
		s := &t.slots[p]
		if s.gid == 0 {
			return false
		}
		if s.key == w && s.gid == gid {
			break
		}
		p = (p + 1) & t.mask
	}
	// Backward shift: a later slot q of the run may fill the gap at p
	// unless its home lies cyclically in (p, q].
	for q := (p + 1) & t.mask; t.slots[q].gid != 0; q = (q + 1) & t.mask {
		home := (fixedHash(t.slots[q].key) >> t.shift) & t.mask
		if (q-home)&t.mask >= (q-p)&t.mask {
			t.slots[p] = t.slots[q]
			p = q
		}
	}
	t.slots[p] = groupSlot{}
	t.n--
	return true
}

// Each calls fn for every word and id in the map, in slot order.
func (m *WordMap) Each(fn func(w uint64, id int32)) {
	for _, s := range m.t.slots {
		if s.gid != 0 {
			fn(s.key, int32(s.gid)-1)
		}
	}
}

// Clear empties the map, keeping its slots for the next adds.
func (m *WordMap) Clear() {
	clear(m.t.slots)
	m.t.n = 0
}

// Reset empties the map, dropping its slots.
func (m *WordMap) Reset() { *m = WordMap{} }
