package vector

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// This file holds the sort kernels: typed row comparators chosen once per
// key type, order-preserving 64-bit keys with an LSD radix sort for
// fixed-width keys, and 8-byte prefixes for string keys. Every sort is
// stable: rows with equal keys keep their input order (ties are broken by
// row index, or the sort itself is stable).

// sortKind is how a key type is sorted.
type sortKind int8

const (
	sortNone   sortKind = iota // NULL type: every row equal
	sortFixed                  // fixed width, mapped to an ordered uint64
	sortBytes                  // string or binary
	sortCompar                 // only by comparator (decimal)
)

// keyKind returns how dt sorts, or an error for types that cannot be
// sorted.
func keyKind(dt arrow.DataType) (sortKind, error) {
	switch dt.ID() {
	case arrow.NULL:
		return sortNone, nil
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.TIMESTAMP, arrow.DATE32:
		return sortFixed, nil
	case arrow.STRING, arrow.BINARY:
		return sortBytes, nil
	case arrow.DECIMAL128:
		return sortCompar, nil
	}
	return 0, fmt.Errorf("cannot sort by a %s value: %w", TypeName(dt), ErrType)
}

// rowCmp compares two rows of one key column, nulls and direction included.
type rowCmp interface {
	cmp(a, b int32) int
}

// nullOrder holds what every key comparator needs about nulls and
// direction.
type nullOrder struct {
	valid      []byte // validity bitmap or nil
	off        int
	desc       bool
	nullsFirst bool
}

// nulls compares a and b by nullness only: done is false when both are
// valid.
func (o *nullOrder) nulls(a, b int32) (c int, done bool) {
	if o.valid == nil {
		return 0, false
	}
	av := bitutil.BitIsSet(o.valid, o.off+int(a))
	bv := bitutil.BitIsSet(o.valid, o.off+int(b))
	switch {
	case av && bv:
		return 0, false
	case av == bv:
		return 0, true
	case !av == o.nullsFirst:
		return -1, true
	default:
		return 1, true
	}
}

func (o *nullOrder) dir(c int) int {
	if o.desc {
		return -c
	}
	return c
}

type intCmp[T int8 | int16 | int32 | int64] struct {
	nullOrder
	v []T
}

func (k *intCmp[T]) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	return k.dir(cmp.Compare(k.v[a], k.v[b]))
}

// floatCmp orders as Spark: NaN is greater than every number and equal to
// itself; -0.0 equals 0.0.
type floatCmp[T float32 | float64] struct {
	nullOrder
	v []T
}

func (k *floatCmp[T]) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	x, y := k.v[a], k.v[b]
	var c int
	switch {
	case x < y:
		c = -1
	case x > y:
		c = 1
	case x == y:
		c = 0
	default: // at least one NaN
		c = cmp.Compare(b2i(x != x), b2i(y != y))
	}
	return k.dir(c)
}

type boolCmp struct {
	nullOrder
	v   []byte
	vof int
}

func (k *boolCmp) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	x := bitutil.BitIsSet(k.v, k.vof+int(a))
	y := bitutil.BitIsSet(k.v, k.vof+int(b))
	return k.dir(cmp.Compare(b2i(x), b2i(y)))
}

type bytesCmp struct {
	nullOrder
	offs []int32
	data []byte
}

func (k *bytesCmp) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	return k.dir(bytes.Compare(k.data[k.offs[a]:k.offs[a+1]], k.data[k.offs[b]:k.offs[b+1]]))
}

type decimalCmp struct {
	nullOrder
	v []decimal128.Num
}

func (k *decimalCmp) cmp(a, b int32) int {
	if c, done := k.nulls(a, b); done {
		return c
	}
	return k.dir(k.v[a].Cmp(k.v[b]))
}

type noneCmp struct{}

func (noneCmp) cmp(a, b int32) int { return 0 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newRowCmp returns the comparator of a key column.
func newRowCmp(arr arrow.Array, desc, nullsFirst bool) rowCmp {
	o := nullOrder{off: arr.Data().Offset(), desc: desc, nullsFirst: nullsFirst}
	if arr.NullN() > 0 {
		o.valid = arr.NullBitmapBytes()
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return &boolCmp{nullOrder: o, v: a.Data().Buffers()[1].Bytes(), vof: a.Data().Offset()}
	case *array.Int8:
		return &intCmp[int8]{o, a.Int8Values()}
	case *array.Int16:
		return &intCmp[int16]{o, a.Int16Values()}
	case *array.Int32:
		return &intCmp[int32]{o, a.Int32Values()}
	case *array.Int64:
		return &intCmp[int64]{o, a.Int64Values()}
	case *array.Date32:
		return &intCmp[int32]{o, castSlice[int32](arrow.Date32Traits.CastToBytes(a.Date32Values()))}
	case *array.Timestamp:
		return &intCmp[int64]{o, castSlice[int64](arrow.TimestampTraits.CastToBytes(a.TimestampValues()))}
	case *array.Float32:
		return &floatCmp[float32]{o, a.Float32Values()}
	case *array.Float64:
		return &floatCmp[float64]{o, a.Float64Values()}
	case *array.String, *array.Binary:
		offs, data := bytesOf(a)
		return &bytesCmp{nullOrder: o, offs: offs, data: data}
	case *array.Decimal128:
		return &decimalCmp{o, a.Values()}
	}
	return noneCmp{}
}

// bytesOf returns the offsets of a string or binary array's rows (already
// adjusted for its offset) and the whole data buffer they index.
// (ValueBytes would not do: it is cut at the first row's offset while the
// offsets stay absolute.)
func bytesOf(arr arrow.Array) ([]int32, []byte) {
	var offs []int32
	switch a := arr.(type) {
	case *array.String:
		offs = a.ValueOffsets()
	case *array.Binary:
		offs = a.ValueOffsets()
	}
	var data []byte
	if b := arr.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return offs, data
}

// orderedKeys writes, for the rows idx of a fixed-width column, a uint64
// whose unsigned order is the column's order (descending when desc):
// integers flip their sign bit, floats flip the sign bit of positives and
// every bit of negatives, with -0.0 folded into 0.0 and every NaN into one
// value above +Inf.
func orderedKeys(dst []uint64, arr arrow.Array, idx []int32, desc bool) {
	dst = dst[:len(idx)]
	switch a := arr.(type) {
	case *array.Boolean:
		v, off := a.Data().Buffers()[1].Bytes(), a.Data().Offset()
		for o, i := range idx {
			dst[o] = uint64(v[(off+int(i))>>3] >> ((off + int(i)) & 7) & 1)
		}
	case *array.Int8:
		intKeys(dst, a.Int8Values(), idx)
	case *array.Int16:
		intKeys(dst, a.Int16Values(), idx)
	case *array.Int32:
		intKeys(dst, a.Int32Values(), idx)
	case *array.Int64:
		intKeys(dst, a.Int64Values(), idx)
	case *array.Date32:
		intKeys(dst, castSlice[int32](arrow.Date32Traits.CastToBytes(a.Date32Values())), idx)
	case *array.Timestamp:
		intKeys(dst, castSlice[int64](arrow.TimestampTraits.CastToBytes(a.TimestampValues())), idx)
	case *array.Float32:
		floatKeys(dst, a.Float32Values(), idx)
	case *array.Float64:
		floatKeys(dst, a.Float64Values(), idx)
	}
	if desc {
		for i := range dst {
			dst[i] = ^dst[i]
		}
	}
}

func intKeys[T int8 | int16 | int32 | int64](dst []uint64, v []T, idx []int32) {
	for o, i := range idx {
		dst[o] = uint64(int64(v[i])) ^ 1<<63
	}
}

func floatKeys[T float32 | float64](dst []uint64, v []T, idx []int32) {
	for o, i := range idx {
		f := float64(v[i])
		if f == 0 {
			f = 0 // -0.0 == 0.0
		}
		b := math.Float64bits(f)
		if f != f {
			b = 0x7ff8000000000000
		}
		// Negative: invert all bits; positive: set the sign bit.
		mask := uint64(int64(b)>>63) | 1<<63
		dst[o] = b ^ mask
	}
}

// radixSort sorts idx by keys, both permuted together, stably: least
// significant byte first, one counting pass per byte, skipping bytes that
// are the same in every key. tk and ti are scratch of the same length.
func radixSort(keys []uint64, idx []int32, tk []uint64, ti []int32) ([]uint64, []int32) {
	n := len(keys)
	var hist [8][256]int
	for _, k := range keys {
		for b := 0; b < 8; b++ {
			hist[b][byte(k>>(8*b))]++
		}
	}
	for b := 0; b < 8; b++ {
		h := &hist[b]
		if h[byte(keys[0]>>(8*b))] == n {
			continue // every key has this byte: the pass would not move anything
		}
		sum := 0
		for d := range h {
			c := h[d]
			h[d] = sum
			sum += c
		}
		shift := uint(8 * b)
		tk, ti = tk[:n], ti[:n]
		for j, k := range keys {
			d := byte(k >> shift)
			p := h[d]
			tk[p] = k
			ti[p] = idx[j]
			h[d] = p + 1
		}
		keys, tk = tk, keys
		idx, ti = ti, idx
	}
	return keys, idx
}

// sortFixedKeys sorts rows (in input order) by a fixed-width non-null key
// column, stably, and returns them sorted along with their ordered keys.
func sortFixedKeys(arr arrow.Array, rows []int32, desc bool) ([]uint64, []int32) {
	n := len(rows)
	keys := make([]uint64, n)
	orderedKeys(keys, arr, rows, desc)
	if n < 256 {
		// Radix histograms cost more than they save on small inputs; the
		// row index breaks ties, which keeps this sort stable.
		pairs := make([]keyRow, n)
		for i := range pairs {
			pairs[i] = keyRow{keys[i], rows[i]}
		}
		slices.SortFunc(pairs, func(x, y keyRow) int {
			if c := cmp.Compare(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.row, y.row)
		})
		for i, p := range pairs {
			keys[i], rows[i] = p.key, p.row
		}
		return keys, rows
	}
	return radixSort(keys, rows, make([]uint64, n), make([]int32, n))
}

type keyRow struct {
	key uint64
	row int32
}

// prefixRow is a string key's first 8 bytes, big-endian so that integer
// order is byte order, with its row.
type prefixRow struct {
	prefix uint64
	row    int32
}

// sortBytesKeys sorts rows (in input order) by a non-null string or binary
// column and then by the comparators in rest, stably. Most comparisons are
// settled on the 8-byte prefixes without touching the strings.
func sortBytesKeys(arr arrow.Array, rows []int32, desc bool, rest []rowCmp) {
	offs, data := bytesOf(arr)
	pairs := make([]prefixRow, len(rows))
	var buf [8]byte
	for i, r := range rows {
		s := data[offs[r]:offs[r+1]]
		var p uint64
		if len(s) >= 8 {
			p = binary.BigEndian.Uint64(s)
		} else {
			buf = [8]byte{}
			copy(buf[:], s)
			p = binary.BigEndian.Uint64(buf[:])
		}
		pairs[i] = prefixRow{p, r}
	}
	slices.SortFunc(pairs, func(x, y prefixRow) int {
		c := cmp.Compare(x.prefix, y.prefix)
		if c == 0 {
			// Equal prefixes: the strings decide (a short string padded with
			// zero bytes has the prefix of a longer one).
			c = bytes.Compare(data[offs[x.row]:offs[x.row+1]], data[offs[y.row]:offs[y.row+1]])
		}
		if desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		for _, k := range rest {
			if c := k.cmp(x.row, y.row); c != 0 {
				return c
			}
		}
		return cmp.Compare(x.row, y.row)
	})
	for i, p := range pairs {
		rows[i] = p.row
	}
}

// sortByCmp sorts rows by the comparators, stably.
func sortByCmp(rows []int32, keys []rowCmp) {
	slices.SortFunc(rows, func(a, b int32) int {
		for _, k := range keys {
			if c := k.cmp(a, b); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	})
}

// sortRunsByCmp sorts, by the comparators, every run of rows whose ordered
// keys are equal (the rows of a run are already in input order).
func sortRunsByCmp(keys []uint64, rows []int32, cmps []rowCmp) {
	for lo := 0; lo < len(rows); {
		hi := lo + 1
		for hi < len(rows) && keys[hi] == keys[lo] {
			hi++
		}
		if hi-lo > 1 {
			sortByCmp(rows[lo:hi], cmps)
		}
		lo = hi
	}
}
