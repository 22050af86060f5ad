package vector

import (
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// tupleCache is a shortcut of bytesGrouper for composite keys made only of
// dictionary-encoded columns (by entry index), fixed-width columns and
// structs of fixed-width columns, none with nulls: a streaming aggregation
// such as GROUP BY campaign, window(ts, '10 seconds') over a dictionary
// column. Each row's key becomes a tuple of at most maxTupleWords words
// (an entry index, a value's bits), looked up in a small open-addressing
// table that remembers the tuple's group. Only a tuple seen for the first
// time goes through the key encoder and the bytes table, so the groups are
// exactly those of the general path.
//
// A tuple is meaningful only with the dictionaries it was read under: the
// cache keeps them (retained) and starts afresh when a batch brings
// another. Equal tuples always mean equal keys; unequal tuples may still
// be the same key (two entries with one value, -0.0 and 0.0), and then
// simply find the same group through the bytes table.
type tupleCache struct {
	dicts []arrow.Array // per key column: its dictionary (retained), or nil

	k      int      // words per tuple
	tuples []uint64 // tuple id t holds tuples[t*k : t*k+k]
	tgid   []int32  // per tuple id: its group (-1 until resolved)
	slots  []int32  // open addressing: tuple id + 1, 0 for empty
	mask   int

	cols    [][]uint64 // scratch: per word, its value for every row
	idOf    []int32    // scratch: per row, its tuple id
	hashes  []uint64   // scratch: per row, its tuple's hash
	newRows []int32    // scratch: first rows of new tuples
	newIDs  []int32    // scratch: their tuple ids
	newGids []int32
}

// maxTupleWords bounds the words of a tuple; wider keys take the general
// path.
const maxTupleWords = 4

// maxTuples stops the cache from growing past a million tuples: keys of
// that many distinct values gain little from it, and the bytes table
// holds them anyway.
const maxTuples = 1 << 20

func (c *tupleCache) release() {
	for i, d := range c.dicts {
		if d != nil {
			d.Release()
			c.dicts[i] = nil
		}
	}
	c.dicts = c.dicts[:0]
	c.tuples, c.tgid = c.tuples[:0], c.tgid[:0]
	clear(c.slots)
}

// tupleWords appends the word columns of key column a to cols, or reports
// false when a cannot be read as words.
func tupleWords(cols [][]uint64, a arrow.Array, n int) ([][]uint64, bool) {
	if a.NullN() != 0 || len(cols) >= maxTupleWords {
		return cols, false
	}
	next := func() []uint64 {
		w := cols[:len(cols)+1][len(cols)]
		return grow(w, n)[:n]
	}
	if cap(cols) < maxTupleWords {
		cols = make([][]uint64, 0, maxTupleWords)
	}
	switch x := a.(type) {
	case *array.Dictionary:
		w := next()
		switch ix := x.Indices().(type) {
		case *array.Int8:
			widenWords(w, ix.Int8Values())
		case *array.Int16:
			widenWords(w, ix.Int16Values())
		case *array.Int32:
			widenWords(w, ix.Int32Values())
		case *array.Uint8:
			widenWords(w, ix.Uint8Values())
		case *array.Uint16:
			widenWords(w, ix.Uint16Values())
		default:
			return cols, false
		}
		return append(cols, w), true
	case *array.Int64:
		w := next()
		widenWords(w, x.Int64Values())
		return append(cols, w), true
	case *array.Timestamp:
		w := next()
		widenWords(w, x.TimestampValues())
		return append(cols, w), true
	case *array.Int32:
		w := next()
		widenWords(w, x.Int32Values())
		return append(cols, w), true
	case *array.Date32:
		w := next()
		widenWords(w, x.Date32Values())
		return append(cols, w), true
	case *array.Struct:
		ok := true
		for f := 0; ok && f < x.NumField(); f++ {
			child := x.Field(f)
			if _, nested := child.(*array.Struct); nested {
				return cols, false
			}
			if _, dict := child.(*array.Dictionary); dict {
				return cols, false // its dictionary is not tracked
			}
			cols, ok = tupleWords(cols, child, n)
		}
		return cols, ok
	}
	return cols, false
}

type wordable interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16
}

func widenWords[T wordable](out []uint64, in []T) {
	out = out[:len(in)]
	for i, v := range in {
		out[i] = uint64(v)
	}
}

// group is bytesGrouper.group through the cache; it reports false, having
// done nothing, when the keys do not fit it.
func (c *tupleCache) group(g *bytesGrouper, keys []arrow.Array, gids []int32) (bool, error) {
	if len(c.tgid) > maxTuples {
		return false, nil
	}
	n := len(gids)
	cols := c.cols[:0]
	var ok bool
	for _, k := range keys {
		if cols, ok = tupleWords(cols, k, n); !ok {
			c.cols = cols
			return false, nil
		}
	}
	c.cols = cols
	if !c.sameDictionaries(keys, len(cols)) {
		c.reset(keys, len(cols))
	}
	// Pass 1: every row's tuple id; new tuples (group -1) have their first
	// row listed. The hashes are computed a column at a time (the same
	// function as tupleHash), then each row probes the table.
	c.idOf, c.hashes = grow(c.idOf, n), grow(c.hashes, n)
	idOf, hashes := c.idOf[:n], c.hashes[:n]
	for i := range hashes {
		hashes[i] = tupleSeed
	}
	for _, col := range cols {
		col = col[:n]
		for i, w := range col {
			hi, lo := bits.Mul64(hashes[i]^w, tupleMul)
			hashes[i] = hi ^ lo
		}
	}
	newRows, newIDs := c.newRows[:0], c.newIDs[:0]
	for i, h := range hashes {
		id, added := c.findRow(cols, i, h)
		if added {
			newRows, newIDs = append(newRows, int32(i)), append(newIDs, id)
		}
		idOf[i] = id
	}
	c.newRows, c.newIDs = newRows, newIDs
	if len(newRows) > 0 {
		if err := c.resolve(g, keys); err != nil {
			return true, err
		}
	}
	// Pass 2: groups and counts.
	g.extra = growZero(g.extra, g.t.n)
	rows, tgid := g.extra, c.tgid
	for i, id := range idOf {
		gid := tgid[id]
		gids[i] = gid
		rows[gid]++
	}
	return true, nil
}

// resolve gives the new tuples their groups: their first rows are encoded
// and probed like any key.
func (c *tupleCache) resolve(g *bytesGrouper, keys []arrow.Array) error {
	taken := make([]arrow.Array, len(keys))
	defer releaseArrays(taken)
	for i, k := range keys {
		t, err := Take(g.enc.mem, k, c.newRows)
		if err != nil {
			return err
		}
		taken[i] = t
	}
	if err := g.enc.Encode(taken); err != nil {
		return err
	}
	c.newGids = grow(c.newGids, len(c.newRows))
	newGids := c.newGids[:len(c.newRows)]
	g.t.probe(g.enc, newGids)
	g.extra = growZero(g.extra, g.t.n)
	for j, id := range c.newIDs {
		c.tgid[id] = newGids[j]
		g.extra[newGids[j]]-- // the probe counted a row for the tuple
	}
	return nil
}

// sameDictionaries reports whether keys bring the dictionaries (and the
// tuple width) the cache was filled under.
func (c *tupleCache) sameDictionaries(keys []arrow.Array, k int) bool {
	if c.k != k || len(c.dicts) != len(keys) {
		return false
	}
	for i, key := range keys {
		d, isDict := key.(*array.Dictionary)
		switch {
		case isDict != (c.dicts[i] != nil):
			return false
		case isDict && d.Dictionary().Data() != c.dicts[i].Data():
			return false
		}
	}
	return true
}

// reset empties the cache for keys' dictionaries and a tuple of k words.
func (c *tupleCache) reset(keys []arrow.Array, k int) {
	c.release()
	for _, key := range keys {
		var d arrow.Array
		if x, ok := key.(*array.Dictionary); ok {
			d = x.Dictionary()
			d.Retain()
		}
		c.dicts = append(c.dicts, d)
	}
	c.k = k
	if len(c.slots) == 0 {
		c.slots = make([]int32, 64)
		c.mask = 63
	}
}

const (
	tupleSeed = 0x9e3779b97f4a7c15
	tupleMul  = 0xbf58476d1ce4e5b9
)

func tupleHash(t []uint64) uint64 {
	h := uint64(tupleSeed)
	for _, w := range t {
		hi, lo := bits.Mul64(h^w, tupleMul)
		h = hi ^ lo
	}
	return h
}

// findRow is find for row i of the word columns, whose hash is h.
func (c *tupleCache) findRow(cols [][]uint64, i int, h uint64) (id int32, added bool) {
	if 2*(len(c.tgid)+1) > len(c.slots) {
		c.growTable()
	}
	k := c.k
	p := int(h) & c.mask
	for {
		sl := c.slots[p]
		if sl == 0 {
			id = int32(len(c.tgid))
			for _, col := range cols[:k] {
				c.tuples = append(c.tuples, col[i])
			}
			c.tgid = append(c.tgid, -1)
			c.slots[p] = id + 1
			return id, true
		}
		t := c.tuples[int(sl-1)*k : int(sl)*k]
		eq := true
		switch k {
		case 3: // a dictionary and a window: the common streaming key
			eq = t[0] == cols[0][i] && t[1] == cols[1][i] && t[2] == cols[2][i]
		default:
			for w, col := range cols[:k] {
				if t[w] != col[i] {
					eq = false
					break
				}
			}
		}
		if eq {
			return sl - 1, false
		}
		p = (p + 1) & c.mask
	}
}

func (c *tupleCache) growTable() {
	c.slots = make([]int32, 2*len(c.slots))
	c.mask = len(c.slots) - 1
	k := c.k
	for id := range c.tgid {
		p := int(tupleHash(c.tuples[id*k:id*k+k])) & c.mask
		for c.slots[p] != 0 {
			p = (p + 1) & c.mask
		}
		c.slots[p] = int32(id) + 1
	}
}
