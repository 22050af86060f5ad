package stateful

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/arrowstream/arrowstream/vector"
)

// The key index of a join side's live state: from a join key to the
// stored rows with that key, laid out as a hash join's build side. An
// open-addressing table (vector.WordMap) maps the key's word to its slot;
// the slot holds the key and the head, tail and lengths of a chain of the
// key's rows; the chain's links are one int32 per indexed row in an array
// (next) by row number. Every indexed row has a number of the side's (a
// gid): a batch indexed gets the next free range of numbers, row r of the
// batch being number b.gid+r, and a table of the ranges (spans, in number
// order) tells a number's batch by a binary search.
//
// A row so costs 4 bytes and no allocation of its own (the per-key lists
// of 16-byte refs, a batch pointer and a row each, it replaces cost a
// pointer the collector scans, a list per key grown by doubling, and its
// slack): indexing a batch is a column probe of its keys and one write
// of a link per row, and the keys' rows are chained in number order, the
// order batches were indexed.
//
// Eviction leaves the rows it evicts in their chains when they are not at
// the head (a batch's evicted rows are a prefix of it: a key's oldest rows
// are usually its head, popped at once); a chain with more dead rows than
// live is pruned when it passes twice its live rows, and the numbers of
// evicted rows are reclaimed by renumbering every live row when the link
// array would grow while most of its numbers are dead (each chain walked
// once, dead links dropped: paid for by the evictions that made them
// dead). A merge of batches whose ranges are adjacent (the newest of a
// side that never evicts, stateful_join_merge.go) keeps every number: the
// merged batch's range is the union of theirs. Compaction and copy-out
// keep a batch's row numbers, so neither touches the index.

// joinRowBytes is the approximate heap bytes of an indexed row: its 4-byte
// link, in an array kept at most about twice the live rows.
const joinRowBytes = 8

// renumberMin is how many dead numbers the link array holds before a
// renumbering is worth its walk of the chains.
const renumberMin = 4096

// joinKeySlot is a key's entry: its chain of rows, by number. n counts the
// rows chained, live counts those not evicted.
type joinKeySlot[K joinKey] struct {
	key        K
	head, tail int32
	n, live    int32
}

// joinSpan is the range of numbers of an indexed batch: from start (its
// first row indexed) to b.gid+b.end.
type joinSpan[K joinKey] struct {
	start int32
	b     *joinBatch[K]
}

// joinKeyIndex maps a join key to its rows.
type joinKeyIndex[K joinKey] struct {
	// words maps a key's word (keyWord) to its slot: the vector package's
	// open-addressing table (vector.WordMap), not a Go map, so that a
	// batch of keys is probed column-wise and the collector has no map to
	// scan. A byte key's word is its hash, so several slots may share
	// one, told apart by the key kept in the slot.
	words vector.WordMap
	joinKeyWords[K]
	slab  joinKeySlab[K] // the keys' slots, by id (the WordMap's)
	free  []int32
	links joinLinks     // by number: the next row of the key's chain, -1 at its end
	spans []joinSpan[K] // the indexed batches' ranges, by start
	rows  int64         // live rows chained
	found []int32       // findAll's scratch (probe)
	// keyBuf, nullBuf: the keys of a batch read from its record
	// (joinBatch.keySpan), kept across epochs.
	keyBuf  []K
	nullBuf []bool
	// maxNumber bounds the numbers (math.MaxInt32; tests lower it to
	// renumber often).
	maxNumber int32
	renumbers int // how many times the rows were renumbered
}

func newJoinKeyIndex[K joinKey]() joinKeyIndex[K] {
	return joinKeyIndex[K]{joinKeyWords: newJoinKeyWords[K](), maxNumber: math.MaxInt32}
}

// len is the number of keys indexed.
func (x *joinKeyIndex[K]) len() int { return x.words.Len() }

// find returns k's slot, -1 when k is not indexed.
func (x *joinKeyIndex[K]) find(k K) int32 {
	w := x.word(k)
	if x.fixed() {
		return x.words.Find(w)
	}
	it := x.words.Probe(w)
	for i := it.Next(); i >= 0; i = it.Next() {
		if x.slab.at(i).key == k {
			return i
		}
	}
	return -1
}

// has tells whether k has rows indexed.
func (x *joinKeyIndex[K]) has(k K) bool { return x.find(k) >= 0 }

// findAll returns the slot of every key of keys (-1: not indexed, or a
// null key), in a scratch slice valid until the next call. Fixed keys are
// probed as one column (vector.WordMap.FindAll).
func (x *joinKeyIndex[K]) findAll(keys []K, null []bool) []int32 {
	ids := int32s(&x.found, len(keys))
	if x.fixed() {
		x.words.FindAll(fixedWords(keys), null, ids)
		return ids
	}
	for j, k := range keys {
		ids[j] = -1
		if !null[j] {
			ids[j] = x.find(k)
		}
	}
	return ids
}

// slotFor returns k's slot, making an empty one (no rows) when k is not
// indexed (fresh).
func (x *joinKeyIndex[K]) slotFor(k K) (i int32, fresh bool) {
	// The slot k gets if it is new: the last freed, else the next.
	next := x.slab.len()
	if n := len(x.free); n > 0 {
		next = x.free[n-1]
	}
	if x.fixed() {
		// One walk of the key's probe run finds or adds it.
		if i, fresh = x.words.FindOrAdd(x.word(k), next); !fresh {
			return i, false
		}
	} else {
		if i := x.find(k); i >= 0 {
			return i, false
		}
		x.words.Add(x.word(k), next)
	}
	if n := len(x.free); n > 0 {
		x.free = x.free[:n-1]
	} else {
		x.slab.grow()
	}
	*x.slab.at(next) = joinKeySlot[K]{key: k, head: -1, tail: -1}
	return next, true
}

// errJoinRowNumbers is returned when a side's live rows would need more
// row numbers than the key index has (maxNumber): the index is left as
// it was, the batch not indexed.
var errJoinRowNumbers = errors.New("join key index: out of row numbers")

// insertRows indexes the rows [from, to) of b (not indexed before) whose
// keys are not null, counting them live: b gets the next range of
// numbers, and each row is linked at the tail of its key's chain. It
// returns the approximate heap bytes it added (joinKeyOverhead and the
// key's bytes for each key indexed first, joinRowBytes a row), or
// errJoinRowNumbers with nothing indexed.
func (x *joinKeyIndex[K]) insertRows(b *joinBatch[K], from, to int32) (bytes int64, err error) {
	n := int(to - from)
	if n <= 0 {
		b.gid = int32(x.links.len()) - from
		return 0, nil
	}
	if err := x.reserveNumbers(n); err != nil {
		return 0, err
	}
	start := int32(x.links.len())
	b.gid = start - from
	x.links.extend(n)
	x.spans = append(x.spans, joinSpan[K]{start: start, b: b})
	lo, hi := from-b.base, to-b.base
	// The keys already indexed are found as a column; a row whose key is
	// not (or was made by an earlier row of the batch) looks again.
	keys, keyNull := b.keySpan(lo, hi, &x.keyBuf, &x.nullBuf)
	found := x.findAll(keys, keyNull)
	// The table grows once for the keys the batch adds, not by doublings
	// as they come (each a table of fresh memory and a pass over every
	// key), and for its distinct new keys, not its rows with a new key: a
	// batch of 5K bids for 300 new auctions would otherwise double a
	// table of 3K keys to 32K slots (512 KiB touched afresh) for 300 more.
	// The count is an estimate (vector.WordCount); a key it misses grows
	// the table as it is added.
	if n := x.distinctNew(keys, keyNull, found); n > 0 {
		x.words.Reserve(n)
	}
	for j, i := range found {
		g := start + int32(j)
		if keyNull[j] {
			continue
		}
		if i < 0 {
			var isNew bool
			if i, isNew = x.slotFor(keys[j]); isNew {
				bytes += joinKeyOverhead + keyBytes(keys[j])
			}
		}
		s := x.slab.at(i)
		if s.n == 0 {
			s.head = g
		} else {
			x.links.set(s.tail, g)
		}
		s.tail = g
		s.n++
		s.live++
		x.rows++
		bytes += joinRowBytes
	}
	return bytes, nil
}

// distinctNew estimates how many distinct keys of keys (null: keyNull)
// are not indexed (found -1), rounded up (vector.WordCount.Upper).
func (x *joinKeyIndex[K]) distinctNew(keys []K, keyNull []bool, found []int32) int {
	var c vector.WordCount
	for j, i := range found {
		if i < 0 && !keyNull[j] {
			c.Add(x.word(keys[j]))
		}
	}
	return c.Upper()
}

// reserveNumbers makes room for n more numbers: when the link array would
// grow (or the numbers run out) while most of its numbers are dead, the
// live rows are renumbered first. When the live rows and n more still
// exceed the numbers, it returns errJoinRowNumbers (wrapped) and adds
// none: 2^31 rows in one partition's side is beyond its memory, but a
// query must fail with an error, not a panic.
func (x *joinKeyIndex[K]) reserveNumbers(n int) error {
	have := x.links.len()
	over := int64(have)+int64(n) > int64(x.maxNumber)
	grows := have+n > x.links.capacity() && int64(have) >= 2*x.rows+renumberMin
	if over || grows {
		x.renumber()
	}
	if int64(x.links.len())+int64(n) > int64(x.maxNumber) {
		return fmt.Errorf("%w: %d live rows and %d more exceed %d", errJoinRowNumbers, x.links.len(), n, x.maxNumber)
	}
	return nil
}

// locate returns the batch and row of number g, nil when g's batch left
// the index (dropped).
func (x *joinKeyIndex[K]) locate(g int32) (*joinBatch[K], int32) {
	j := x.spanAt(g)
	if j < 0 {
		return nil, 0
	}
	b := x.spans[j].b
	return b, g - b.gid
}

// spanAt returns the index of the span holding number g, -1 for none.
func (x *joinKeyIndex[K]) spanAt(g int32) int {
	sp := x.spans
	lo, hi := 0, len(sp)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if sp[m].start <= g {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || g-sp[lo-1].b.gid >= sp[lo-1].b.end {
		return -1
	}
	return lo - 1
}

// alive tells whether number g is a live row.
func (x *joinKeyIndex[K]) alive(g int32) bool {
	b, row := x.locate(g)
	return b != nil && row >= b.cursor
}

// evictRows unindexes the evicted rows [from, to) of b (b.cursor already
// past them) and returns the heap bytes it freed. A key whose rows are
// all evicted leaves the index; an evicted row at the head of its chain
// is unlinked, others wait for the chain's pruning or a renumbering.
func (x *joinKeyIndex[K]) evictRows(b *joinBatch[K], from, to int32) (bytes int64) {
	lo, hi := from-b.base, to-b.base
	keys, keyNull := b.keySpan(lo, hi, &x.keyBuf, &x.nullBuf)
	for j, i := range x.findAll(keys, keyNull) {
		if i < 0 {
			continue
		}
		s := x.slab.at(i)
		if s.live <= 0 {
			continue // not this key's slot any more: it left (a miscount)
		}
		g := b.gid + from + int32(j)
		s.live--
		x.rows--
		bytes += joinRowBytes
		switch {
		case s.live == 0:
			bytes += joinKeyOverhead + keyBytes(s.key)
			x.removeSlot(i)
		case s.head == g:
			s.head = x.links.at(g)
			s.n--
		case s.n > 2*s.live+4:
			x.prune(s)
		}
	}
	return bytes
}

// prune unlinks the dead rows of s's chain.
func (x *joinKeyIndex[K]) prune(s *joinKeySlot[K]) {
	head, tail, n := int32(-1), int32(-1), int32(0)
	for g := s.head; g >= 0; g = x.links.at(g) {
		if !x.alive(g) {
			continue
		}
		if n == 0 {
			head = g
		} else {
			x.links.set(tail, g)
		}
		tail = g
		n++
	}
	if tail >= 0 {
		x.links.set(tail, -1)
	}
	s.head, s.tail, s.n = head, tail, n
}

// removeSlot drops slot i's key and chain.
func (x *joinKeyIndex[K]) removeSlot(i int32) {
	s := x.slab.at(i)
	x.rows -= int64(s.live)
	x.words.Remove(x.word(s.key), i)
	*s = joinKeySlot[K]{}
	x.free = append(x.free, i)
}

// renumber gives the live rows the numbers from 0 on, batch after batch
// in number order (a batch's live rows [cursor, end) a range), and
// rebuilds the chains of the new numbers with their dead rows left out.
func (x *joinKeyIndex[K]) renumber() {
	x.renumbers++
	old := x.spans
	gids := make([]int32, len(old))
	var at int32
	for j, sp := range old {
		b := sp.b
		gids[j] = math.MinInt32 // no live row: the span leaves
		if b.cursor < b.end {
			gids[j] = at - b.cursor
			at += b.end - b.cursor
		}
	}
	next := filledLinks(int(at))
	oldLinks := &x.links
	x.words.Each(func(_ uint64, i int32) {
		s := x.slab.at(i)
		head, tail, n := int32(-1), int32(-1), int32(0)
		for g := s.head; g >= 0; g = oldLinks.at(g) {
			j := x.spanAt(g)
			if j < 0 || g-old[j].b.gid < old[j].b.cursor {
				continue
			}
			ng := gids[j] + g - old[j].b.gid
			if n == 0 {
				head = ng
			} else {
				next.set(tail, ng)
			}
			tail = ng
			n++
		}
		s.head, s.tail, s.n = head, tail, n
	})
	spans := old[:0]
	for j, sp := range old {
		if gids[j] == math.MinInt32 {
			continue
		}
		sp.b.gid = gids[j]
		spans = append(spans, joinSpan[K]{start: gids[j] + sp.b.cursor, b: sp.b})
	}
	clear(old[len(spans):])
	x.spans = spans
	x.links = next
}

// spanOf returns the index of b's span, -1 when b has none.
func (x *joinKeyIndex[K]) spanOf(b *joinBatch[K]) int {
	if j := x.spanAt(b.gid + b.end - 1); j >= 0 && x.spans[j].b == b {
		return j // b's last row is in its span if it has one
	}
	return -1
}

// forget removes b's span (b is dropped: its rows are all evicted, and any
// left in chains are dead).
func (x *joinKeyIndex[K]) forget(b *joinBatch[K]) {
	if j := x.spanOf(b); j >= 0 {
		x.spans = slices.Delete(x.spans, j, j+1)
	}
}

// joinRanges makes the ranges of tail's batches (tail[0] the first; the
// others indexed right after it, rows numbered from offs[j] in the first
// once merged) one range of the first's, telling whether their numbers
// allowed it: each must start where the previous ends. The links are
// left as they are: the rows keep their numbers.
func (x *joinKeyIndex[K]) joinRanges(tail []*joinBatch[K], offs []int32) bool {
	first := tail[0]
	lo, n := -1, 0
	var gid int32
	for j, b := range tail {
		if b.end == 0 {
			continue // no rows, no range
		}
		sp := x.spanOf(b)
		switch {
		case sp < 0 || b.cursor != 0:
			return false
		case lo < 0:
			lo, gid = sp, b.gid-offs[j]
		case sp != lo+n || b.gid-offs[j] != gid:
			return false
		}
		n++
	}
	if n == 0 {
		return true
	}
	first.gid = gid
	x.spans[lo] = joinSpan[K]{start: gid, b: first}
	x.spans = slices.Delete(x.spans, lo+1, lo+n)
	return true
}

// each calls fn for every key and its slot.
func (x *joinKeyIndex[K]) each(fn func(k K, s *joinKeySlot[K])) {
	x.words.Each(func(_ uint64, i int32) {
		s := x.slab.at(i)
		fn(s.key, s)
	})
}

// release drops the keys (the index stays usable, its hash seed kept).
func (x *joinKeyIndex[K]) release() {
	*x = joinKeyIndex[K]{joinKeyWords: x.joinKeyWords, maxNumber: x.maxNumber}
}
