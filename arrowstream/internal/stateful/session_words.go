package stateful

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// sessionWords is the decoded sessions' key table for a single
// fixed-width grouping key: the key's 64-bit word (vector.KeyEncoder's
// Fixed, the value itself sign-extended for integers) → its open
// sessions, by open addressing with linear probing over two typed arrays
// (no Go map, no per-epoch numbering table). Deletes shift the following
// entries of the probe run back (no tombstones), so a lookup stops at the
// first empty slot. The table is kept across epochs: a key with open
// sessions is one probe, whichever epoch brought it. The null key is not
// in it (sessionDecoded.nullKey).
type sessionWords struct {
	words []uint64
	ents  []*keySessions // nil: an empty slot
	n     int
	shift uint8 // 64 - log2(len(words))
}

// minWordSlots is the table's smallest size (a power of two).
const minWordSlots = 64

func newSessionWords() *sessionWords {
	t := &sessionWords{}
	t.resize(minWordSlots)
	return t
}

func (t *sessionWords) resize(slots int) {
	words, ents := t.words, t.ents
	t.words = make([]uint64, slots)
	t.ents = make([]*keySessions, slots)
	t.shift = uint8(64 - bits.TrailingZeros(uint(slots)))
	t.n = 0
	for i, e := range ents {
		if e != nil {
			t.put(words[i], e)
		}
	}
}

// slot is w's home slot: Fibonacci hashing, so that consecutive integers
// (bidder ids) spread over the table.
func (t *sessionWords) slot(w uint64) int {
	return int((w * 0x9E3779B97F4A7C15) >> t.shift)
}

// get returns w's entry (nil: none).
func (t *sessionWords) get(w uint64) *keySessions {
	mask := len(t.words) - 1
	for i := t.slot(w); ; i = (i + 1) & mask {
		e := t.ents[i]
		if e == nil || t.words[i] == w {
			return e
		}
	}
}

// put makes e w's entry (replacing any), growing the table past three
// quarters full. (Half full doubled the table's memory, and each doubling
// is fresh memory for a table kept as long as the state: Fibonacci
// hashing spreads the bidder ids, consecutive integers, evenly enough
// that linear probing's runs stay short at three quarters.)
func (t *sessionWords) put(w uint64, e *keySessions) {
	if 4*(t.n+1) > 3*len(t.words) {
		t.resize(2 * len(t.words))
	}
	mask := len(t.words) - 1
	i := t.slot(w)
	for ; t.ents[i] != nil; i = (i + 1) & mask {
		if t.words[i] == w {
			t.ents[i] = e
			return
		}
	}
	t.words[i], t.ents[i] = w, e
	t.n++
}

// del removes w's entry, if any, shifting back the entries after it in
// its probe run that may take its slot; the table shrinks when an eighth
// full, so that ranging over it stays a cost of its keys.
func (t *sessionWords) del(w uint64) {
	mask := len(t.words) - 1
	i := t.slot(w)
	for ; ; i = (i + 1) & mask {
		if t.ents[i] == nil {
			return
		}
		if t.words[i] == w {
			break
		}
	}
	t.n--
	for j := (i + 1) & mask; t.ents[j] != nil; j = (j + 1) & mask {
		// Entry j may move to the hole at i unless its home slot lies
		// cyclically in (i, j].
		if home := t.slot(t.words[j]); (j-home)&mask >= (j-i)&mask {
			t.words[i], t.ents[i] = t.words[j], t.ents[j]
			i = j
		}
	}
	t.words[i], t.ents[i] = 0, nil
	if len(t.words) > minWordSlots && 8*t.n < len(t.words) {
		t.resize(len(t.words) / 2)
	}
}

// each calls f with every entry, in slot order (f must not change t).
func (t *sessionWords) each(f func(*keySessions)) {
	for _, e := range t.ents {
		if e != nil {
			f(e)
		}
	}
}

// bytes is the table's Go-heap size.
func (t *sessionWords) bytes() int64 {
	return int64(len(t.words)) * int64(8+unsafe.Sizeof(uintptr(0)))
}

// wordKeyType reports whether a grouping key of type dt is numbered by
// its column's values (numberWords): the integral types and the date and
// timestamp, whose KeyEncoder word is the value sign-extended.
func wordKeyType(dt arrow.DataType) bool {
	switch vector.Unwrap(dt).ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

// keyWords writes the KeyEncoder word of every row of col (one of
// wordKeyType's) to buf, grown to col's length, and returns it; a null
// row's word is undefined (the caller checks validity).
func keyWords(col arrow.Array, buf []uint64) ([]uint64, error) {
	n := col.Len()
	if cap(buf) < n {
		buf = make([]uint64, n, n+n/4)
	}
	buf = buf[:n]
	if err := vector.ColumnWords(col, buf); err != nil {
		return buf, fmt.Errorf("arrowstream: session key: %w", err)
	}
	return buf, nil
}

// numberWords is numberKeys for a single integral key (d.byWords): each
// row's key is found by its value in the decoded state's word table, one
// probe per row, and numbered at its first row of the epoch. A key
// without open sessions gets its entry at once (newKey, so that its later rows
// find it); only those rows are then gathered and encoded by the key
// codec, for the entry's stored bytes and partition. In steady q11 that
// is the ~200 new bidders of an epoch's ~9,200 rows, where the general
// numbering ran a per-epoch key index over every row and encoded every
// key's first row (~970).
func (s *statefulSessionWindow) numberWords(d *sessionDecoded, col arrow.Array, keyOf []int32) error {
	var err error
	if d.wordBuf, err = keyWords(col, d.wordBuf); err != nil {
		return fmt.Errorf("arrowstream: key numbering of operator %d: %w", s.opID, err)
	}
	words := d.wordBuf
	fresh := d.firsts[:0]
	nulls := col.NullN() > 0
	for i, w := range words {
		var ks *keySessions
		if nulls && col.IsNull(i) {
			if ks = d.nullKey; ks == nil {
				ks = d.newKey()
				d.nullKey = ks
				fresh = append(fresh, int32(i))
			}
		} else if ks = d.fixed.get(w); ks == nil {
			ks = d.newKey()
			d.fixed.put(w, ks)
			fresh = append(fresh, int32(i))
		}
		if ks.stamp != d.stamp {
			ks.stamp, ks.num = d.stamp, int32(len(d.owners))
			d.owners = append(d.owners, ks)
			d.touched = append(d.touched, ks)
		}
		keyOf[i] = ks.num
	}
	d.firsts = fresh
	if len(fresh) == 0 {
		return nil
	}
	enc := col
	if len(fresh) < len(words) {
		g, err := vector.Gather(s.mem, col, fresh)
		if err != nil {
			return fmt.Errorf("arrowstream: key numbering of operator %d: %w", s.opID, err)
		}
		defer g.Release()
		enc = g
	}
	c := s.keyCodec
	if err := c.encodeCols([]arrow.Array{enc}); err != nil {
		return err
	}
	defer c.encodeCols(nil) // the codec keeps no gathered column
	for j, i := range fresh {
		ks := d.owners[keyOf[i]]
		ks.setKey(c.at(j))
		ks.part = int32(s.state.scheme.of(c, j, len(s.state.stores)))
		d.keyBytes += int64(len(ks.key)) + perKeyBytes
	}
	return nil
}

// setKey sets ks's stored key bytes (copied; a fixed-width key's into
// ks's own storage).
func (ks *keySessions) setKey(key []byte) {
	if len(key) == fixedKeyLen {
		copy(ks.word[:], key)
		ks.key = unsafe.String(&ks.word[0], fixedKeyLen)
	} else {
		ks.key = string(key)
	}
}
