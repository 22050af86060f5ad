package stateful

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Stored batches' keys read from their record's key column in place.
// A stored batch kept its rows' key words and key-null flags in slices of
// its own (9 bytes a row), copied from the epoch's new keys when it was
// built, and again when batches were merged or compacted. A side that
// never evicts (Nexmark q4's and q20's bids) so faulted in fresh pages
// for every row it stores (the copies were 0.36 s of a q4 profile,
// session 25). When the join key is one integral column of the side's
// rows (not null-safe: fixedKeys), the codec's word of a key is the
// column's value sign-extended to 64 bits and 0 for a null, and the
// batch's record holds that column (a kept batch is retained, so its
// buffers are read while it lives): such a batch keeps no key slices and
// its readers (the key index's insert and eviction, the scan of pending
// batches, the partner sets) read the words of the rows they need into
// reused scratch (keySpan). Batches built otherwise (a computed key, a
// dictionary column) keep their slices; a merge of both kinds gives the
// merged batch slices.

// keyColumnOf returns the column of side's rows that is its only join
// key, -1 when the key is not a plain column of an integral type whose
// word is its value (derivableKeyType). fixedKeys tells the join's key
// is one fixed-width column that is not null-safe.
func keyColumnOf(side *joinSide, fixedKeys bool) int {
	if !fixedKeys || len(side.keys) != 1 {
		return -1
	}
	ev, err := side.keys[0].Bind(side.codec.schema, nil)
	if err != nil {
		return -1
	}
	c, ok := ev.(interface{ Column() (int, bool) })
	if !ok {
		return -1
	}
	col, top := c.Column()
	if !top || col < 0 || col >= side.codec.schema.NumFields() || !derivableKeyType(side.codec.schema.Field(col).Type) {
		return -1
	}
	return col
}

// derivableKeyType tells whether a key column of type t has the row
// codec's fixed word of its value (vector.KeyEncoder: sign-extended to 64
// bits), read by keyWordsOf.
func derivableKeyType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.INT32, arrow.DATE32, arrow.INT16, arrow.INT8:
		return true
	}
	return false
}

// deriveKeys tells whether a batch of side i over rec keeps no key
// slices: its key column is rec's column keyCol (K is the word type).
func deriveKeys[K joinKey](side *joinSide, rec arrow.Record) bool {
	var zero K
	if _, ok := any(zero).(uint64); !ok || side.keyCol < 0 || int(rec.NumCols()) <= side.keyCol {
		return false
	}
	return derivableKeyType(rec.Column(side.keyCol).DataType())
}

// keySpan returns the keys and key-null flags of b's rows [lo, hi)
// (relative to base): b's own slices, or for a batch whose keys are its
// record's column the words read into kb and nb (reused scratch, valid
// until the next call with them).
func (b *joinBatch[K]) keySpan(lo, hi int32, kb *[]K, nb *[]bool) ([]K, []bool) {
	if !b.derived {
		return b.keys[lo:hi], b.keyNull[lo:hi]
	}
	n := int(hi - lo)
	keys := *kb
	if cap(keys) < n {
		keys = make([]K, n, max(n, 2*cap(keys)))
		*kb = keys
	}
	keys = keys[:n]
	nulls := bools(nb, n)
	keyWordsOf(b.rec.Column(b.keyCol), b.sel, int(lo), any(keys).([]uint64), nulls)
	return keys, nulls
}

// keyWordsOf sets words[k] and nulls[k] to the key word and null flag of
// row selRow(sel, lo+k) of col (nulls cleared by the caller).
func keyWordsOf(col arrow.Array, sel []int32, lo int, words []uint64, nulls []bool) {
	switch c := col.(type) {
	case *array.Int64:
		readKeyWords(c.Int64Values(), sel, lo, words)
	case *array.Timestamp:
		readKeyWords(c.TimestampValues(), sel, lo, words)
	case *array.Int32:
		readKeyWords(c.Int32Values(), sel, lo, words)
	case *array.Date32:
		readKeyWords(c.Date32Values(), sel, lo, words)
	case *array.Int16:
		readKeyWords(c.Int16Values(), sel, lo, words)
	case *array.Int8:
		readKeyWords(c.Int8Values(), sel, lo, words)
	default:
		panic("arrowstream: join key column of " + col.DataType().String() + " read in place")
	}
	if col.NullN() == 0 {
		return
	}
	for k := range words {
		if col.IsNull(selRow(sel, lo+k)) {
			words[k], nulls[k] = 0, true // the codec's word of a null key
		}
	}
}

func readKeyWords[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, sel []int32, lo int, words []uint64) {
	if sel == nil {
		for k, v := range vals[lo : lo+len(words)] {
			words[k] = uint64(int64(v))
		}
		return
	}
	for k, r := range sel[lo : lo+len(words)] {
		words[k] = uint64(int64(vals[r]))
	}
}

// materializeKeys gives a batch whose keys are its record's column key
// slices of its own (a merge with batches that have slices).
func (b *joinBatch[K]) materializeKeys() {
	if !b.derived {
		return
	}
	var kb []K
	var nb []bool
	keys, nulls := b.keySpan(0, b.end-b.base, &kb, &nb)
	b.keys, b.keyNull, b.derived = keys, nulls, false
}
