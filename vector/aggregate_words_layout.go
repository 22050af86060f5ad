package vector

// The words grouper's stored layout. A key's words are its leaves and its
// null word (the logical words); a tuple need not store them all. A word
// that, for every group in the table, equals another stored word plus a
// constant (a window's end: its start plus the window's size) or a
// constant (the null word of keys that were never null) is derived: it is
// neither stored, hashed nor compared, since two keys whose stored words
// are equal then have equal derived words too. GROUP BY window(ts, …), key
// hashes and compares two words instead of four, and its tuples take half
// the memory, so more of the table stays in cache.
//
// The relations are learned from the first batch an empty table sees
// (a new grouper, or one emptied by resetGroups or keepGroups) and checked
// on every later batch before it is probed: a batch that breaks one makes
// the word stored again (widen: every tuple gets it, the table is
// rehashed), once per word, so the groups stay exactly those of the full
// tuples. Keys are rebuilt with the derived words computed back.

// wordRel says how a logical word is had from a tuple: stored at pos, or
// derived as (base's value, or 0 when base < 0) + off.
type wordRel struct {
	stored bool
	pos    int // stored: its position in the tuple
	base   int // derived: the logical word it follows, -1 for a constant
	off    uint64
}

// initLayout stores every logical word (nw of them).
func (g *wordsGrouper) initLayout(nw int) {
	g.nw = nw
	g.rel = make([]wordRel, nw)
	g.layout(nil)
}

// layout sets the stored words: every logical word but those of derived
// (by logical word; nil: none), in logical order.
func (g *wordsGrouper) layout(derived map[int]wordRel) {
	g.k = 0
	for w := range g.rel {
		if r, ok := derived[w]; ok {
			g.rel[w] = r
			continue
		}
		g.rel[w] = wordRel{stored: true, pos: g.k}
		g.k++
	}
	g.storedCols()
}

// storedCols points pcols at the scratch columns of the stored words, in
// their order in the tuples, and notes whether that is the logical order
// with every word stored.
func (g *wordsGrouper) storedCols() {
	g.pcols = grow(g.pcols, g.k)[:g.k]
	g.inOrder = g.k == g.nw
	for w, r := range g.rel {
		if r.stored {
			if w < len(g.cols) {
				g.pcols[r.pos] = g.cols[w]
			}
			g.inOrder = g.inOrder && r.pos == w
		}
	}
}

// fitLayout makes the layout fit the batch of n rows in the scratch
// columns (every logical word filled): an empty table learns it from the
// batch, a table with groups stores every derived word the batch breaks.
// nulls says whether any row has a null bit; without, the null word is
// all zero and is not read.
func (g *wordsGrouper) fitLayout(n int, nulls bool) {
	if g.numGroups() == 0 {
		g.learnLayout(n, nulls)
		return
	}
	for w, r := range g.rel {
		if !r.stored && !g.holds(w, r, n, nulls) {
			g.widen(w)
		}
	}
	g.storedCols()
}

// holds reports whether every row of the batch has word w as r derives it.
func (g *wordsGrouper) holds(w int, r wordRel, n int, nulls bool) bool {
	if w == g.nw-1 && !nulls {
		return r.base < 0 && r.off == 0
	}
	col := g.cols[w][:n]
	if r.base < 0 {
		for _, v := range col {
			if v != r.off {
				return false
			}
		}
		return true
	}
	base := g.cols[r.base][:n]
	for i, v := range col {
		if v != base[i]+r.off {
			return false
		}
	}
	return true
}

// learnLayout derives, from a batch of n > 0 rows, the null word when it
// is the same in every row, and each leaf that differs by a constant from
// an earlier stored leaf in every row. Leaves are not taken as constants:
// a streaming batch often holds one window, which the next batch breaks.
func (g *wordsGrouper) learnLayout(n int, nulls bool) {
	if n == 0 {
		g.storedCols()
		return
	}
	derived := map[int]wordRel{}
	null := g.nw - 1
	if r := (wordRel{base: -1, off: g.cols[null][0]}); !nulls || g.holds(null, r, n, true) {
		if !nulls {
			r.off = 0
		}
		derived[null] = r
	}
	for j := 1; j < null; j++ {
		for i := range j {
			if _, d := derived[i]; d {
				continue
			}
			r := wordRel{base: i, off: g.cols[j][0] - g.cols[i][0]}
			if g.holds(j, r, n, nulls) {
				derived[j] = r
				break
			}
		}
	}
	g.layout(derived)
}

// widen stores the derived word w in every tuple (after the stored ones)
// and rehashes the table: a batch had a key it does not derive.
func (g *wordsGrouper) widen(w int) {
	r := g.rel[w]
	k, groups, size := g.k, g.numGroups(), g.numSlots()
	t := make([]uint64, groups*(k+1), max(cap(g.tuples)/k*(k+1), groups*(k+1)))
	for gid := range groups {
		old := g.tuples[gid*k : gid*k+k]
		copy(t[gid*(k+1):], old)
		v := r.off
		if r.base >= 0 {
			v += old[g.rel[r.base].pos]
		}
		t[gid*(k+1)+k] = v
	}
	g.tuples, g.k = t, k+1
	g.rel[w] = wordRel{stored: true, pos: k}
	g.storedCols()
	g.rehash(size) // the hashes change with the stored words
}

// word returns logical word w of group gid's key.
func (g *wordsGrouper) word(gid, w int) uint64 {
	r := g.rel[w]
	if r.stored {
		return g.tuples[gid*g.k+r.pos]
	}
	v := r.off
	if r.base >= 0 {
		v += g.tuples[gid*g.k+g.rel[r.base].pos]
	}
	return v
}

// fullTuples returns the logical words of the groups gids as tuples of nw
// words, with the ids to read them by: the table itself when every word
// is stored in logical order, else a scratch copy numbered 0…len(gids)-1.
func (g *wordsGrouper) fullTuples(gids []int32) ([]uint64, []int32) {
	if g.inOrder {
		return g.tuples, gids
	}
	nw := g.nw
	g.full = grow(g.full, len(gids)*nw)
	full := g.full[:len(gids)*nw]
	for w, r := range g.rel {
		switch {
		case r.stored:
			for i, gid := range gids {
				full[i*nw+w] = g.tuples[int(gid)*g.k+r.pos]
			}
		case r.base < 0:
			for i := range gids {
				full[i*nw+w] = r.off
			}
		default:
			bp := g.rel[r.base].pos
			for i, gid := range gids {
				full[i*nw+w] = g.tuples[int(gid)*g.k+bp] + r.off
			}
		}
	}
	g.ids = grow(g.ids, len(gids))
	ids := g.ids[:len(gids)]
	for i := range ids {
		ids[i] = int32(i)
	}
	return full, ids
}
