package vector

import (
	"math/bits"
	"unsafe"
)

// WordMap maps 64-bit words to int32 ids the caller chooses, with
// removal: the group tables' 16-byte slots and hash (hashtable.go: linear
// probing) for a caller that keeps its own per-key
// data in a slice and reuses the numbers of removed keys, such as a
// streaming join's key index, whose keys leave when the watermark evicts
// their rows.
//
// A word is either the key itself (a single fixed-width key) or the hash
// of a longer key: then several ids may share a word, Add does not look
// for an equal word, and the caller walks the candidates (Probe) and
// compares its own keys. Removal shifts the following slots of the probe
// run back (no tombstones), so a table with heavy churn does not fill up
// with dead slots. A WordMap starts without slots and is not safe for
// concurrent use.
//
// The slots are in pages of at most wordPageSlots (extendible hashing): a
// directory by the top depth bits of a word's hash points to the page of
// its prefix, and a word's home in its page is the next bits. A map of
// one page grows by doubling it; a full-sized page that needs room splits
// in place: its words with the next bit set move to a new page, the
// others stay. So a map grows by allocating only the pages it keeps,
// where doubling one table allocated and rehashed all of it at every
// growth and dropped the old: in a streaming join, whose index grows
// epoch after epoch from empty, those dropped tables were half of the
// index's fresh memory (docs/performance.md, "The join's key index:
// slots in pages, a table that splits").
type WordMap struct {
	dir   []*wordPage // by the top depth bits of a word's hash
	pages []*wordPage // every page once, in the order made
	depth uint
	n     int
	// moved is a split's scratch: the slots of the page it splits.
	moved []groupSlot
}

// wordPage is a page of slots: the words whose hash starts with prefix
// (its top ld bits), each at or after its home (the ld bits are skipped,
// the next log2(len(slots)) bits give it) in a probe run that wraps
// around the page's end.
type wordPage struct {
	slots  []groupSlot
	n      int
	ld     uint   // local depth: how many top bits of the hash the page's words share
	prefix uint64 // those bits
	shift  uint   // 64 - log2(len(slots))
	mask   uint64 // len(slots) - 1
}

// wordPageSlots is a page's largest size (4 KiB, an OS page): a map of one page grows
// by doubling up to it, and splits its pages after. Small maps (a join
// keeps an index per partition and side, hundreds, most small) stay one
// small page.
const wordPageSlots = 256

// minWordMapSlots is the first page's size.
const minWordMapSlots = 16

// maxWordDepth bounds the directory's depth (its entries 2^depth).
const maxWordDepth = 32

func newWordPage(slots int, ld uint, prefix uint64) *wordPage {
	return &wordPage{
		slots: make([]groupSlot, slots), ld: ld, prefix: prefix,
		shift: uint(64 - bits.TrailingZeros(uint(slots))), mask: uint64(slots - 1),
	}
}

// home returns hash h's home slot in p.
func (p *wordPage) home(h uint64) uint64 { return (h << p.ld) >> p.shift }

// put adds slot s (its word's hash h) to p, which has an empty slot.
func (p *wordPage) put(h uint64, s groupSlot) {
	i := p.home(h)
	for p.slots[i].gid != 0 {
		i = (i + 1) & p.mask
	}
	p.slots[i] = s
	p.n++
}

// full tells whether p has no room for one more word at its load bound.
func (p *wordPage) full() bool { return !wordFits(p.n+1, len(p.slots)) }

// wordFits tells whether n words fit in slots slots: at most three
// quarters full (linear probing's runs stay short; the aggregation's
// tables, rebuilt rarely, keep half).
func wordFits(n, slots int) bool { return 4*n <= 3*slots }

// Len is the number of ids in the map.
func (m *WordMap) Len() int { return m.n }

// HeapBytes is the Go-heap memory of the slots.
func (m *WordMap) HeapBytes() int64 {
	var n int64
	for _, p := range m.pages {
		n += int64(len(p.slots)) * int64(unsafe.Sizeof(groupSlot{}))
	}
	return n + int64(len(m.dir))*8
}

// page returns the page of hash h.
func (m *WordMap) page(h uint64) *wordPage {
	if m.depth == 0 {
		return m.dir[0]
	}
	return m.dir[h>>(64-m.depth)]
}

// Reserve makes room for extra more ids. A map of one page is sized for
// them at once (a map built from a batch of keys allocates its pages
// once); a map of several pages splits a page when it fills.
func (m *WordMap) Reserve(extra int) {
	want := m.n + extra
	switch {
	case len(m.pages) > 1 || extra <= 0:
		return
	case len(m.pages) == 0:
		l := minWordMapSlots
		for !wordFits(want, l) && l < wordPageSlots {
			l *= 2
		}
		if wordFits(want, l) {
			p := newWordPage(l, 0, 0)
			m.dir, m.pages = []*wordPage{p}, []*wordPage{p}
			return
		}
	case wordFits(want, len(m.pages[0].slots)):
		return
	}
	// One page, too small: doubled when it may, else spread over enough
	// full-sized pages at once.
	if wordFits(want, wordPageSlots) {
		l := len(m.pages[0].slots)
		for !wordFits(want, l) {
			l *= 2
		}
		m.regrow(0, l)
		return
	}
	d := uint(1)
	for !wordFits(want, wordPageSlots<<d) && d < maxWordDepth {
		d++
	}
	m.regrow(d, wordPageSlots)
}

// regrow moves every word into 2^depth fresh pages of slots slots each.
func (m *WordMap) regrow(depth uint, slots int) {
	old := m.pages
	m.depth = depth
	m.pages = make([]*wordPage, 1<<depth)
	for i := range m.pages {
		m.pages[i] = newWordPage(slots, depth, uint64(i))
	}
	m.dir = append(m.dir[:0:0], m.pages...)
	for _, p := range old {
		for _, s := range p.slots {
			if s.gid != 0 {
				h := fixedHash(s.key)
				m.page(h).put(h, s)
			}
		}
	}
}

// room returns the page of hash h with room for one more word, growing
// or splitting it first when it is at its load bound.
func (m *WordMap) room(h uint64) *wordPage {
	if len(m.pages) == 0 {
		m.Reserve(1)
	}
	for {
		p := m.page(h)
		if !p.full() {
			return p
		}
		switch {
		case len(m.pages) == 1 && len(p.slots) < wordPageSlots:
			m.regrow(0, 2*len(p.slots)) // the one page, doubled
		case p.ld < m.depth || (len(m.dir) < maxWordDirRatio*len(m.pages) && m.depth < maxWordDepth):
			m.split(p)
		default:
			m.growPage(p)
		}
	}
}

// maxWordDirRatio bounds the directory's entries per page: a page whose
// words share more top bits than the directory so allows (words whose
// hashes agree in many bits) grows instead of splitting, so that they
// cannot double the directory again and again.
const maxWordDirRatio = 256

// growPage replaces p by a page of twice its slots, with its words.
func (m *WordMap) growPage(p *wordPage) {
	q := newWordPage(2*len(p.slots), p.ld, p.prefix)
	for _, s := range p.slots {
		if s.gid != 0 {
			q.put(fixedHash(s.key), s)
		}
	}
	lo := p.prefix << (m.depth - p.ld)
	for i := range uint64(1) << (m.depth - p.ld) {
		m.dir[lo+i] = q
	}
	for i, r := range m.pages {
		if r == p {
			m.pages[i] = q
		}
	}
}

// split moves the words of p whose next hash bit is set to a new page,
// doubling the directory first when p's words share all its bits.
func (m *WordMap) split(p *wordPage) {
	if p.ld == m.depth {
		dir := make([]*wordPage, 2*len(m.dir))
		for i, q := range m.dir {
			dir[2*i], dir[2*i+1] = q, q
		}
		m.dir = dir
		m.depth++
	}
	moved := m.moved[:0]
	for _, s := range p.slots {
		if s.gid != 0 {
			moved = append(moved, s)
		}
	}
	clear(p.slots)
	p.n = 0
	p.ld++
	p.prefix <<= 1
	q := &wordPage{slots: make([]groupSlot, len(p.slots)), ld: p.ld, prefix: p.prefix | 1, shift: p.shift, mask: p.mask}
	m.pages = append(m.pages, q)
	// The directory's entries of q's prefix: a run of 2^(depth-ld).
	lo := q.prefix << (m.depth - q.ld)
	for i := range uint64(1) << (m.depth - q.ld) {
		m.dir[lo+i] = q
	}
	for _, s := range moved {
		h := fixedHash(s.key)
		if (h<<(p.ld-1))>>63 == 0 {
			p.put(h, s)
		} else {
			q.put(h, s)
		}
	}
	m.moved = moved[:0]
}

// Add maps word w to id (id ≥ 0). It does not look for w first: a
// second Add of a word adds a second id for it.
func (m *WordMap) Add(w uint64, id int32) {
	h := fixedHash(w)
	m.room(h).put(h, groupSlot{key: w, gid: uint32(id) + 1})
	m.n++
}

// FindOrAdd returns the id of word w, mapping w to id first when it has
// none (added): one walk of w's probe run where Find and then Add take
// two. For words that are keys (one id a word).
func (m *WordMap) FindOrAdd(w uint64, id int32) (got int32, added bool) {
	h := fixedHash(w)
	p := m.room(h)
	for i := p.home(h); ; i = (i + 1) & p.mask {
		s := &p.slots[i]
		if s.gid == 0 {
			*s = groupSlot{key: w, gid: uint32(id) + 1}
			p.n++
			m.n++
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
	if m.n == 0 {
		return -1
	}
	h := fixedHash(w)
	p := m.page(h)
	for i := p.home(h); ; i = (i + 1) & p.mask {
		s := &p.slots[i]
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
	if m.n == 0 {
		for i := range ids {
			ids[i] = -1
		}
		return
	}
	var miss [probeChunk]int32
	for start := 0; start < len(ws); start += probeChunk {
		end := min(start+probeChunk, len(ws))
		chunk, out := ws[start:end], ids[start:end]
		out = out[:len(chunk)]
		nm := 0
		for j, w := range chunk {
			h := fixedHash(w)
			p := m.page(h)
			s := &p.slots[p.home(h)]
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
	pg *wordPage
	w  uint64
	i  uint64
}

// Probe starts a walk over the ids added for word w.
func (m *WordMap) Probe(w uint64) WordProbe {
	if m.n == 0 {
		return WordProbe{}
	}
	h := fixedHash(w)
	p := m.page(h)
	return WordProbe{pg: p, w: w, i: p.home(h)}
}

// Next returns the walk's next id, -1 at its end. The map must not change
// during the walk.
func (it *WordProbe) Next() int32 {
	p := it.pg
	if p == nil {
		return -1
	}
	for {
		s := &p.slots[it.i]
		if s.gid == 0 {
			return -1
		}
		it.i = (it.i + 1) & p.mask
		if s.key == it.w {
			return int32(s.gid) - 1
		}
	}
}

// Remove removes the mapping of word w to id, telling whether it was
// there. The slots after it in its probe run move back over the gap when
// their home allows, so every remaining word stays reachable from its
// home without a tombstone. Pages are not merged back.
func (m *WordMap) Remove(w uint64, id int32) bool {
	if m.n == 0 {
		return false
	}
	gid := uint32(id) + 1
	h := fixedHash(w)
	pg := m.page(h)
	p := pg.home(h)
	for {
		s := &pg.slots[p]
		if s.gid == 0 {
			return false
		}
		if s.key == w && s.gid == gid {
			break
		}
		p = (p + 1) & pg.mask
	}
	// Backward shift: a later slot q of the run may fill the gap at p
	// unless its home lies cyclically in (p, q].
	for q := (p + 1) & pg.mask; pg.slots[q].gid != 0; q = (q + 1) & pg.mask {
		home := pg.home(fixedHash(pg.slots[q].key))
		if (q-home)&pg.mask >= (q-p)&pg.mask {
			pg.slots[p] = pg.slots[q]
			p = q
		}
	}
	pg.slots[p] = groupSlot{}
	pg.n--
	m.n--
	return true
}

// Each calls fn for every word and id in the map, page by page in slot
// order.
func (m *WordMap) Each(fn func(w uint64, id int32)) {
	for _, p := range m.pages {
		for _, s := range p.slots {
			if s.gid != 0 {
				fn(s.key, int32(s.gid)-1)
			}
		}
	}
}

// Clear empties the map, keeping its pages for the next adds.
func (m *WordMap) Clear() {
	for _, p := range m.pages {
		clear(p.slots)
		p.n = 0
	}
	m.n = 0
}

// Reset empties the map, dropping its slots.
func (m *WordMap) Reset() { *m = WordMap{} }
