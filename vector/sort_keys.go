package vector

import (
	"bytes"
	"cmp"
	"context"
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
// fixed-width keys, and an MSD radix sort on 8-byte chunks for string keys. Every sort is
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
	case arrow.LIST, arrow.STRUCT:
		if checkOrderable(dt) == nil {
			return sortCompar, nil // sort_nested.go
		}
	}
	return 0, fmt.Errorf("cannot sort by a %s value: %w", TypeName(dt), ErrType)
}

// sortKeyKind is keyKind for the keys of a Sort (ORDER BY, window and
// top-N orders), which may also be day-time or year-month intervals:
// signed counts of microseconds or months, ordered as numbers as Spark
// orders them. (Array kernels that order elements keep keyKind.)
func sortKeyKind(dt arrow.DataType) (sortKind, error) {
	switch dt.ID() {
	case arrow.DURATION, arrow.INTERVAL_MONTHS:
		return sortFixed, nil
	}
	return keyKind(dt)
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
		c = cmp.Compare(rankBool(x != x), rankBool(y != y))
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
	return k.dir(cmp.Compare(rankBool(x), rankBool(y)))
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

func rankBool(b bool) int {
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
		return &boolCmp{nullOrder: o, v: bufferBytes(a.Data(), 1), vof: a.Data().Offset()}
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
	case *array.Duration:
		return &intCmp[int64]{o, castSlice[int64](arrow.DurationTraits.CastToBytes(a.DurationValues()))}
	case *array.MonthInterval:
		return &intCmp[int32]{o, castSlice[int32](arrow.MonthIntervalTraits.CastToBytes(a.MonthIntervalValues()))}
	case *array.Float32:
		return &floatCmp[float32]{o, a.Float32Values()}
	case *array.Float64:
		return &floatCmp[float64]{o, a.Float64Values()}
	case *array.String, *array.Binary:
		offs, data := binaryParts(a)
		return &bytesCmp{nullOrder: o, offs: offs, data: data}
	case *array.Decimal128:
		return &decimalCmp{o, a.Values()}
	case *array.List, *array.Struct:
		return &nestedCmp{o, a}
	}
	return noneCmp{}
}

// binaryParts returns the offsets of a string or binary array's rows (already
// adjusted for its offset) and the whole data buffer they index.
// (ValueBytes would not do: it is cut at the first row's offset while the
// offsets stay absolute.)
func binaryParts(arr arrow.Array) ([]int32, []byte) {
	if bufferBytes(arr.Data(), 1) == nil {
		return []int32{0}, nil // zero-length without buffers
	}
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

// orderedKeys fills dst with the rows idx of a fixed-width column, each
// with a uint64 key whose unsigned order is the column's order (descending
// when desc):
// integers flip their sign bit, floats flip the sign bit of positives and
// every bit of negatives, with -0.0 folded into 0.0 and every NaN into one
// value above +Inf.
func orderedKeys(dst []keyRow, arr arrow.Array, idx []int32, desc bool) {
	dst = dst[:len(idx)]
	switch a := arr.(type) {
	case *array.Boolean:
		v, off := bufferBytes(a.Data(), 1), a.Data().Offset()
		for o, i := range idx {
			dst[o] = keyRow{uint64(v[(off+int(i))>>3] >> ((off + int(i)) & 7) & 1), i}
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
	case *array.Duration:
		intKeys(dst, castSlice[int64](arrow.DurationTraits.CastToBytes(a.DurationValues())), idx)
	case *array.MonthInterval:
		intKeys(dst, castSlice[int32](arrow.MonthIntervalTraits.CastToBytes(a.MonthIntervalValues())), idx)
	case *array.Float32:
		floatKeys(dst, a.Float32Values(), idx)
	case *array.Float64:
		floatKeys(dst, a.Float64Values(), idx)
	}
	if desc {
		for i := range dst {
			dst[i].key = ^dst[i].key
		}
	}
}

func intKeys[T int8 | int16 | int32 | int64](dst []keyRow, v []T, idx []int32) {
	for o, i := range idx {
		dst[o] = keyRow{uint64(int64(v[i])) ^ 1<<63, i}
	}
}

func floatKeys[T float32 | float64](dst []keyRow, v []T, idx []int32) {
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
		dst[o] = keyRow{b ^ mask, i}
	}
}

// keyRow is a row with its ordered key. Radix passes move the two
// together: one 16-byte element per row is faster to scatter than two
// parallel arrays.
type keyRow struct {
	key uint64
	row int32
}

// radixSortKeys sorts a by key, stably: least significant byte first, one
// counting pass per byte, skipping bytes that are the same in every key. t
// is scratch of the same length; the result is in a or t.
// It checks ctx every cancelCheckRows rows of each pass.
func radixSortKeys(ctx context.Context, a, t []keyRow) ([]keyRow, error) {
	n := len(a)
	var hist [8][256]int32
	for lo := 0; lo < n; lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, e := range a[lo:min(lo+cancelCheckRows, n)] {
			k := e.key
			for b := 0; b < 8; b++ {
				hist[b][byte(k>>(8*b))]++
			}
		}
	}
	for b := 0; b < 8; b++ {
		h := &hist[b]
		if int(h[byte(a[0].key>>(8*b))]) == n {
			continue // every key has this byte: the pass would not move anything
		}
		sum := int32(0)
		for d := range h {
			c := h[d]
			h[d] = sum
			sum += c
		}
		shift := uint(8 * b)
		t = t[:n]
		for lo := 0; lo < n; lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for _, e := range a[lo:min(lo+cancelCheckRows, n)] {
				d := byte(e.key >> shift)
				p := h[d]
				t[p] = e
				h[d] = p + 1
			}
		}
		a, t = t, a
	}
	return a, nil
}

// sortFixedKeys sorts rows (in input order) by a fixed-width non-null key
// column, stably, writes them back to rows in order and returns them with
// their ordered keys.
// Its buffers come from m (bigAlloc); the result is one of them.
func sortFixedKeys(ctx context.Context, m *bigMem, arr arrow.Array, rows []int32, desc bool) ([]keyRow, error) {
	n := len(rows)
	pairs, err := bigAlloc[keyRow](ctx, m, n)
	if err != nil {
		return nil, err
	}
	orderedKeys(pairs, arr, rows, desc)
	pairs, err = sortKeyRowsIn(ctx, m, pairs)
	if err != nil {
		return nil, err
	}
	for i, p := range pairs {
		rows[i] = p.row
	}
	return pairs, nil
}

// sortKeyRows sorts pairs by key, stably (pairs come in input order or,
// deeper in a string sort, in the order of an earlier stable pass).
func sortKeyRows(ctx context.Context, pairs []keyRow) ([]keyRow, error) {
	return sortKeyRowsIn(ctx, nil, pairs)
}

// sortKeyRowsIn is sortKeyRows with its scratch from m (bigAlloc); of
// pairs and the scratch, the one that is not the result is freed.
func sortKeyRowsIn(ctx context.Context, m *bigMem, pairs []keyRow) ([]keyRow, error) {
	if len(pairs) < 256 {
		// Radix histograms cost more than they save on small inputs; the
		// row index breaks ties, which keeps this sort stable.
		slices.SortFunc(pairs, func(x, y keyRow) int {
			if c := cmp.Compare(x.key, y.key); c != 0 {
				return c
			}
			return cmp.Compare(x.row, y.row)
		})
		return pairs, nil
	}
	scratch, err := bigAlloc[keyRow](ctx, m, len(pairs))
	if err != nil {
		return nil, err
	}
	sorted, err := radixSortKeys(ctx, pairs, scratch)
	if err != nil {
		bigFree(m, scratch)
		return nil, err
	}
	if &sorted[0] == &pairs[0] {
		bigFree(m, scratch)
	} else {
		bigFree(m, pairs)
	}
	return sorted, nil
}

// byteSorter sorts rows of a string or binary column: a most significant
// digit first radix sort whose digits are 8-byte chunks read big-endian
// (integer order is byte order). Rows that tie on a chunk are split into
// those whose value ends within it, ordered by length (a shorter one is a
// prefix of a longer one: the zero padding of its chunk matched), and those
// that go on, sorted on their next chunk. Each pass is stable, so the sort
// is. Rows with equal values are finally ordered by the further keys.
//
// The sort checks ctx once every cancelCheckRows rows of work (summed over
// its passes) and then stops at the first chance, leaving err set.
type byteSorter struct {
	offs []int32
	data []byte
	desc bool
	rest []rowCmp
	ctx  context.Context
	work int // rows handled since ctx was last checked
	err  error
	big  bigMem // the large per-level buffers (bigAlloc), each freed after its level
}

// sortBytesKeys sorts rows (in input order) by a non-null string or binary
// column and then by the comparators in rest, stably. It returns ctx's
// error when ctx ends first (rows are then in no particular order).
// Its large buffers come from m's cache (bigMem), when m is not nil.
func sortBytesKeys(ctx context.Context, m *bigMem, arr arrow.Array, rows []int32, desc bool, rest []rowCmp) error {
	offs, data := binaryParts(arr)
	b := byteSorter{offs: offs, data: data, desc: desc, rest: rest, ctx: ctx}
	if m != nil {
		b.big.cache = m.cache
	}
	defer b.big.release()
	b.sort(rows, 0)
	return b.err
}

// stopped accounts for rows of work and reports whether the sort must
// stop (ctx ended, checked every cancelCheckRows rows).
func (b *byteSorter) stopped(rows int) bool {
	if b.err != nil {
		return true
	}
	b.work += rows
	if b.work >= cancelCheckRows {
		b.work = 0
		b.err = b.ctx.Err()
	}
	return b.err != nil
}

// chunk returns bytes [8*level, 8*level+8) of row's value, zero padded.
func (b *byteSorter) chunk(row int32, level int) uint64 {
	lo := int(b.offs[row]) + 8*level
	hi := int(b.offs[row+1])
	if lo+8 <= hi {
		return binary.BigEndian.Uint64(b.data[lo:])
	}
	var buf [8]byte
	if lo < hi {
		copy(buf[:], b.data[lo:hi])
	}
	return binary.BigEndian.Uint64(buf[:])
}

func (b *byteSorter) length(row int32) int { return int(b.offs[row+1] - b.offs[row]) }

func (b *byteSorter) sort(rows []int32, level int) {
	if b.stopped(len(rows)) {
		return
	}
	pairs, err := bigAlloc[keyRow](b.ctx, &b.big, len(rows))
	if err != nil {
		b.err = err
		return
	}
	for i, r := range rows {
		k := b.chunk(r, level)
		if b.desc {
			k = ^k
		}
		pairs[i] = keyRow{k, r}
	}
	pairs, err = sortKeyRowsIn(b.ctx, &b.big, pairs)
	if err != nil {
		b.err = err
		return
	}
	defer bigFree(&b.big, pairs)
	for i, p := range pairs {
		rows[i] = p.row
	}
	for lo := 0; lo < len(pairs); {
		hi := lo + 1
		for hi < len(pairs) && pairs[hi].key == pairs[lo].key {
			hi++
		}
		if hi-lo > 1 {
			b.sortTies(rows[lo:hi], level)
			if b.err != nil {
				return
			}
		}
		lo = hi
	}
}

// sortTies orders rows that share chunks 0..level.
func (b *byteSorter) sortTies(rows []int32, level int) {
	end := 8 * (level + 1)
	ended, err := bigAlloc[int32](b.ctx, &b.big, len(rows))
	if err != nil {
		b.err = err
		return
	}
	defer bigFree(&b.big, ended)
	goOn, err := bigAlloc[int32](b.ctx, &b.big, len(rows))
	if err != nil {
		b.err = err
		return
	}
	defer bigFree(&b.big, goOn)
	ended, goOn = ended[:0], goOn[:0]
	for _, r := range rows {
		if b.length(r) <= end {
			ended = append(ended, r)
		} else {
			goOn = append(goOn, r)
		}
	}
	// Ended values sharing the chunk differ only in length; equal lengths
	// are equal values.
	slices.SortStableFunc(ended, func(x, y int32) int {
		c := cmp.Compare(b.length(x), b.length(y))
		if b.desc {
			c = -c
		}
		return c
	})
	if len(b.rest) > 0 {
		for lo := 0; lo < len(ended); {
			hi := lo + 1
			for hi < len(ended) && b.length(ended[hi]) == b.length(ended[lo]) {
				hi++
			}
			if hi-lo > 1 {
				if b.err = sortByCmp(b.ctx, &b.big, ended[lo:hi], b.rest); b.err != nil {
					return
				}
			}
			lo = hi
		}
	}
	if len(goOn) > 1 {
		b.sort(goOn, level+1)
	}
	first, second := ended, goOn
	if b.desc {
		first, second = goOn, ended
	}
	copy(rows, first)
	copy(rows[len(first):], second)
}
