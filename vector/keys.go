package vector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// KeyEncoder turns the key columns of a batch into per-row hashes and
// normalized keys, column at a time, for hash aggregation, hash joins and
// state partitioning.
//
// A single fixed-width key (boolean, integers, date, timestamp, double) takes
// the fixed path: each row's key is one 64-bit word (Fixed). Every other key
// (several columns, strings, binary, decimals, structs) is encoded into a
// byte string per row (Key) in which two rows have equal bytes exactly when
// their keys are equal, with nulls equal to each other (grouping semantics;
// joins skip rows with HasNull). Dictionary-encoded strings encode like
// plain strings, so batches of either kind produce the same keys.
//
// Hashes are stable across processes and versions of this package (they are
// computed by a fixed function, not a per-process seed), so they may be used
// to partition persistent state. Doubles hash and compare with -0.0 equal to
// 0.0 and every NaN equal, as Spark groups them.
//
// An encoder keeps its buffers between batches; slices it returns are valid
// until the next Encode. It is used by one goroutine at a time.
type KeyEncoder struct {
	mem   memory.Allocator
	types []arrow.DataType // declared key types, dictionaries unwrapped
	fixed bool

	n       int
	hashes  []uint64
	words   []uint64 // fixed path
	nulls   []bool   // per row: any key column null
	anyNull bool

	widths []int32 // bytes path scratch
	leaves []keyLeaf
	offs   []int32
	buf    []byte
	pos    []int32

	// subs encode the elements of list key columns (keys_list.go).
	subs []*KeyEncoder

	// big holds the buffers EncodeContext sized for a large input, mapped
	// outside the Go heap (bigAlloc) until Release.
	big bigMem

	// exact keeps every float's bits (NewValueEncoder): the encoding of
	// stored values, not of grouping keys.
	exact bool
}

// NewKeyEncoder returns an encoder for key columns of the given types.
// mem serves the temporary arrays of struct keys.
func NewKeyEncoder(mem memory.Allocator, types []arrow.DataType) (*KeyEncoder, error) {
	e := &KeyEncoder{mem: mem, types: make([]arrow.DataType, len(types)), big: newBigMem(mem)}
	for i, t := range types {
		t = Unwrap(t)
		if err := checkKeyType(t); err != nil {
			return nil, fmt.Errorf("vector: key column %d: %w", i, err)
		}
		e.types[i] = t
	}
	e.fixed = len(types) == 1 && isFixedKey(e.types[0])
	return e, nil
}

// NewValueEncoder returns an encoder with the layout of NewKeyEncoder's
// (same widths, same decoding) that keeps the exact bits of every FLOAT
// and DOUBLE, -0.0 and NaN payloads included, also inside structs and
// arrays. It is for values kept in state and read back, which must be the
// input's bits; its bytes and hashes do not implement grouping equality
// (-0.0 and 0.0 encode differently), so it must not key a group or a join.
func NewValueEncoder(mem memory.Allocator, types []arrow.DataType) (*KeyEncoder, error) {
	e, err := NewKeyEncoder(mem, types)
	if err != nil {
		return nil, err
	}
	e.exact = true
	return e, nil
}

// Exact reports whether the encoder keeps floats' bits (NewValueEncoder).
func (e *KeyEncoder) Exact() bool { return e.exact }

func checkKeyType(t arrow.DataType) error {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT64,
		arrow.DATE32, arrow.TIMESTAMP, arrow.STRING, arrow.BINARY, arrow.DECIMAL128, arrow.NULL,
		arrow.INTERVAL_MONTHS, arrow.DURATION:
		return nil
	case arrow.STRUCT:
		for _, f := range t.(*arrow.StructType).Fields() {
			if err := checkKeyType(Unwrap(f.Type)); err != nil {
				return err
			}
		}
		return nil
	case arrow.LIST, arrow.FLOAT32:
		return checkNestedKeyType(t)
	}
	return keyTypeError(t)
}

func isFixedKey(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

// Types returns the key types (dictionaries unwrapped).
func (e *KeyEncoder) Types() []arrow.DataType { return e.types }

// IsFixed reports whether keys take the fixed path (Fixed) rather than bytes
// (Key).
func (e *KeyEncoder) IsFixed() bool { return e.fixed }

// Len is the number of rows of the last Encode.
func (e *KeyEncoder) Len() int { return e.n }

// Hashes returns one hash per row.
func (e *KeyEncoder) Hashes() []uint64 { return e.hashes[:e.n] }

// Fixed returns the key of each row as a 64-bit word (fixed path only); the
// word of a null key is 0 and HasNull tells it apart.
func (e *KeyEncoder) Fixed() []uint64 { return e.words[:e.n] }

// EncodedBytes is the size of the last Encode's keys on the bytes path
// (the sum of len(Key(i))), and 0 on the fixed path.
func (e *KeyEncoder) EncodedBytes() int {
	if e.fixed || e.n == 0 {
		return 0
	}
	return int(e.offs[e.n] - e.offs[0])
}

// Key returns the normalized key bytes of row i (bytes path only).
func (e *KeyEncoder) Key(i int) []byte { return e.buf[e.offs[i]:e.offs[i+1]] }

// HasNull reports whether any key column of row i is null.
func (e *KeyEncoder) HasNull(i int) bool { return e.anyNull && e.nulls[i] }

// AnyNull reports whether any row of the last batch has a null key column.
func (e *KeyEncoder) AnyNull() bool { return e.anyNull }

// Encode computes hashes and keys for the rows of cols (borrowed).
func (e *KeyEncoder) Encode(cols []arrow.Array) error {
	n, err := e.check(cols)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := e.reset(ctx, cols, n, false); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if e.fixed {
		return e.encodeFixed(cols[0], e.words[:n], e.hashes[:n], e.nulls[:n])
	}
	return e.encodeBytes(ctx, cols, false)
}

// EncodeContext is Encode for inputs of any size (a hash join's whole
// build side): it encodes the rows in chunks of cancelCheckRows and checks
// ctx between them, so that a cancelled query does not wait for millions
// of rows to be encoded. Its buffers for such an input are mapped outside
// the Go heap and faulted in a megabyte at a time (bigAlloc), so that
// making them does not hold up a cancel either; Release returns them. On
// error the encoder's contents are undefined.
func (e *KeyEncoder) EncodeContext(ctx context.Context, cols []arrow.Array) error {
	n, err := e.check(cols)
	if err != nil {
		return err
	}
	if n <= cancelCheckRows {
		return e.Encode(cols)
	}
	if err := e.reset(ctx, cols, n, true); err != nil {
		return err
	}
	if !e.fixed {
		return e.encodeBytes(ctx, cols, true)
	}
	return forChunks(ctx, n, func(lo, hi int) error {
		part := array.NewSlice(cols[0], int64(lo), int64(hi))
		defer part.Release()
		return e.encodeFixed(part, e.words[lo:hi], e.hashes[lo:hi], e.nulls[lo:hi])
	})
}

// forChunks calls f on consecutive row ranges [lo, hi) of at most
// cancelCheckRows rows covering [0, n), checking ctx before each.
func forChunks(ctx context.Context, n int, f func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f(lo, min(lo+cancelCheckRows, n)); err != nil {
			return err
		}
	}
	return nil
}

// leafSlices returns rows [lo, hi) of every leaf (the leaves themselves
// when that is all of their n rows) and a function releasing the slices.
func leafSlices(leaves []keyLeaf, lo, hi, n int) ([]keyLeaf, func()) {
	if lo == 0 && hi == n {
		return leaves, func() {}
	}
	out := make([]keyLeaf, len(leaves))
	for i, l := range leaves {
		out[i] = keyLeaf{arr: array.NewSlice(l.arr, int64(lo), int64(hi)), structFlag: l.structFlag, list: l.list}
	}
	return out, func() {
		for _, l := range out {
			l.arr.Release()
		}
	}
}

// check validates cols against the encoder's types and returns their rows.
func (e *KeyEncoder) check(cols []arrow.Array) (int, error) {
	if len(cols) != len(e.types) {
		return 0, fmt.Errorf("vector: key encoder has %d key columns, batch has %d", len(e.types), len(cols))
	}
	n := 0
	if len(cols) > 0 {
		n = cols[0].Len()
	}
	for i, c := range cols {
		if c.Len() != n {
			return 0, fmt.Errorf("vector: key column %d has %d rows, want %d", i, c.Len(), n)
		}
		if !TypesEqual(Unwrap(c.DataType()), e.types[i]) {
			return 0, fmt.Errorf("vector: key column %d is %s, want %s: %w", i, TypeName(c.DataType()), TypeName(e.types[i]), ErrType)
		}
	}
	return n, nil
}

// Release returns the buffers EncodeContext mapped for a large input (the
// encoder's slices are invalid afterwards); the encoder stays usable.
// Buffers made by Encode are the garbage collector's.
func (e *KeyEncoder) Release() {
	for _, sub := range e.subs {
		sub.Release()
	}
	if len(e.big.maps) == 0 {
		return
	}
	e.n = 0
	e.hashes, e.words, e.nulls, e.widths, e.offs, e.buf, e.pos = nil, nil, nil, nil, nil, nil, nil
	e.big.release()
}

// keyGrow is grow for an encoder buffer; with big (EncodeContext) a
// buffer that must grow comes from bigAlloc.
func keyGrow[T any](ctx context.Context, e *KeyEncoder, s []T, n int, big bool) ([]T, error) {
	if !big {
		return grow(s, n), nil
	}
	return bigGrow(ctx, &e.big, s, n)
}

// reset sizes the encoder for n rows of cols and finds their nulls
// (markNulls is linear and cheap beside the encoding).
func (e *KeyEncoder) reset(ctx context.Context, cols []arrow.Array, n int, big bool) error {
	e.n = n
	var err error
	if e.hashes, err = keyGrow(ctx, e, e.hashes, n, big); err != nil {
		return err
	}
	if e.nulls, err = keyGrow(ctx, e, e.nulls, n, big); err != nil {
		return err
	}
	e.anyNull = false
	for _, c := range cols {
		if c.NullN() > 0 {
			e.anyNull = true
		}
	}
	if e.anyNull {
		clear(e.nulls[:n])
		for _, c := range cols {
			markNulls(e.nulls[:n], c)
		}
	}
	if n == 0 {
		// Zero-row columns may have no buffers at all (Arrow allows it, IPC
		// produces it), so the encoders must not look at them.
		e.words = e.words[:0]
		e.offs = grow(e.offs, 1)
		e.offs[0] = 0
		e.buf = e.buf[:0]
		return nil
	}
	if e.fixed {
		e.words, err = keyGrow(ctx, e, e.words, n, big)
	}
	return err
}

// grow returns a slice of n Ts, s itself when it has the room, else a new
// one (s's contents are not carried over). A new slice has a quarter more
// room than asked and at least twice s's: the scratch it serves is kept
// across batches whose sizes creep up epoch by epoch (the groups an
// aggregation changes, its output keys), and growing by a quarter of each
// new size made a fresh slice, and fresh pages, at almost every epoch.
// The n asked for are about to be written: a new slice's pages are mapped
// in by PrefaultScratch (a query's first epochs make every scratch on a
// heap whose pages went back to the OS).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		t := make([]T, n, max(n+n/4, 2*cap(s)))
		PrefaultScratch(t)
		return t
	}
	return s[:n]
}

// markNulls sets nulls[i] for every null row of c (a struct's own nulls
// only; null fields inside a struct are part of its value).
func markNulls(nulls []bool, c arrow.Array) {
	if c.NullN() == 0 {
		return
	}
	bm, off := c.NullBitmapBytes(), c.Data().Offset()
	if len(bm) == 0 {
		// A NULL-typed column has no bitmap: every row is null.
		for i := range nulls {
			nulls[i] = true
		}
		return
	}
	for i := range nulls {
		if !bitutil.BitIsSet(bm, off+i) {
			nulls[i] = true
		}
	}
}

// fmix64 is MurmurHash3's 64-bit finalizer: a bijective mix whose low bits
// depend on every input bit, as power-of-two tables need.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

const nullHash = 0x9ae16a3b2f90404f

// encodeFixed writes the words and hashes of c's rows to w and h (both
// len c.Len()); nulls are c's rows' null flags.
func (e *KeyEncoder) encodeFixed(c arrow.Array, w, h []uint64, nulls []bool) error {
	switch a := c.(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			w[i] = uint64(v)
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			w[i] = uint64(v)
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			w[i] = uint64(int64(v))
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			w[i] = uint64(int64(v))
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			w[i] = uint64(int64(v))
		}
	case *array.Int8:
		for i, v := range a.Int8Values() {
			w[i] = uint64(int64(v))
		}
	case *array.Float64:
		if e.exact {
			for i, v := range a.Float64Values() {
				w[i] = math.Float64bits(v)
			}
			break
		}
		for i, v := range a.Float64Values() {
			w[i] = floatKey(v)
		}
	case *array.Boolean:
		for i := range w {
			if a.Value(i) {
				w[i] = 1
			} else {
				w[i] = 0
			}
		}
	default:
		return fmt.Errorf("vector: fixed key of %s: %w", TypeName(c.DataType()), ErrType)
	}
	for i, v := range w {
		h[i] = fmix64(v)
	}
	if e.anyNull {
		for i, isNull := range nulls {
			if isNull {
				w[i] = 0
				h[i] = nullHash
			}
		}
	}
	return nil
}

// floatKey normalizes a double for grouping: -0.0 equals 0.0 and all NaNs
// are one value.
func floatKey(v float64) uint64 {
	if v == 0 {
		return 0
	}
	if v != v {
		return 0x7ff8000000000000
	}
	return math.Float64bits(v)
}

// keyLeaf is one column of the flattened key: a struct contributes a flag
// (its own validity) followed by its fields, with the struct's nulls pushed
// down into them so that a null struct encodes the same whatever its fields
// hold.
type keyLeaf struct {
	arr        arrow.Array
	structFlag bool
	list       *listKeys // a list column's element keys (keys_list.go)
}

// flattenKey appends the leaves of c to leaves; every leaf array is owned
// (retained) and must be released.
func flattenKey(mem memory.Allocator, c arrow.Array, leaves []keyLeaf) ([]keyLeaf, error) {
	if l, ok := c.(*array.List); ok {
		return flattenListKey(l, leaves)
	}
	st, ok := c.(*array.Struct)
	if !ok {
		c.Retain()
		return append(leaves, keyLeaf{arr: c}), nil
	}
	st.Retain()
	leaves = append(leaves, keyLeaf{arr: st, structFlag: true})
	for f := 0; f < st.NumField(); f++ {
		field, err := withParentNulls(mem, st.Field(f), st)
		if err != nil {
			return leaves, err
		}
		leaves, err = flattenKey(mem, field, leaves)
		field.Release()
		if err != nil {
			return leaves, err
		}
	}
	return leaves, nil
}

// encodeBytes encodes every column into per-row byte strings: for each
// leaf a flag byte (0 null, 1 valid) followed, when valid, by the value
// (fixed width little-endian, or a 4-byte length and the bytes). It works
// in chunks of cancelCheckRows rows, checking ctx between them.
func (e *KeyEncoder) encodeBytes(ctx context.Context, cols []arrow.Array, big bool) error {
	n := e.n
	leaves := e.leaves[:0]
	defer func() {
		for i := range leaves {
			leaves[i].arr.Release()
			leaves[i].list.release()
			leaves[i] = keyLeaf{}
		}
		e.leaves = leaves[:0]
	}()
	for _, c := range cols {
		var err error
		leaves, err = flattenKey(e.mem, c, leaves)
		if err != nil {
			return err
		}
	}
	if err := e.prepareListKeys(ctx, leaves); err != nil {
		return err
	}
	var err error
	if e.widths, err = keyGrow(ctx, e, e.widths, n, big); err != nil {
		return err
	}
	widths := e.widths[:n]
	clear(widths)
	err = forChunks(ctx, n, func(lo, hi int) error {
		part, release := leafSlices(leaves, lo, hi, n)
		defer release()
		for _, l := range part {
			if err := addWidths(widths[lo:hi], l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.offs, err = keyGrow(ctx, e, e.offs, n+1, big); err != nil {
		return err
	}
	total := int32(0)
	for i, w := range widths {
		e.offs[i] = total
		total += w
	}
	e.offs[n] = total
	if e.buf, err = keyGrow(ctx, e, e.buf, int(total), big); err != nil {
		return err
	}
	if e.pos, err = keyGrow(ctx, e, e.pos, n, big); err != nil {
		return err
	}
	copy(e.pos, e.offs[:n])
	h := e.hashes[:n]
	clear(h)
	return forChunks(ctx, n, func(lo, hi int) error {
		part, release := leafSlices(leaves, lo, hi, n)
		defer release()
		for _, l := range part {
			if err := writeKeys(e.buf, e.pos[lo:hi], h[lo:hi], l, e.exact); err != nil {
				return err
			}
		}
		for i := lo; i < hi; i++ {
			h[i] = fmix64(h[i])
		}
		return nil
	})
}

func fixedWidth(id arrow.Type) int32 {
	switch id {
	case arrow.BOOL, arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32, arrow.DATE32, arrow.INTERVAL_MONTHS, arrow.FLOAT32:
		return 4
	case arrow.INT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DURATION:
		return 8
	case arrow.DECIMAL128:
		return 16
	case arrow.NULL:
		return 0
	}
	return -1
}

// validBits returns c's validity bitmap and offset, or nil when c has no
// nulls.
func validBits(c arrow.Array) ([]byte, int) {
	if c.NullN() == 0 {
		return nil, 0
	}
	return c.NullBitmapBytes(), c.Data().Offset()
}

func addWidths(widths []int32, l keyLeaf) error {
	c := l.arr
	if l.structFlag {
		for i := range widths {
			widths[i]++
		}
		return nil
	}
	if l.list != nil {
		return l.list.addWidths(widths, c.(*array.List))
	}
	bm, off := validBits(c)
	switch a := c.(type) {
	case *array.String:
		addVarWidths(widths, a.ValueOffsets(), bm, off)
	case *array.Binary:
		addVarWidths(widths, a.ValueOffsets(), bm, off)
	case *array.Dictionary:
		dict, ok := a.Dictionary().(*array.String)
		if !ok {
			return fmt.Errorf("vector: dictionary key of %s: %w", TypeName(c.DataType()), ErrType)
		}
		idx, err := DictionaryIndices(a)
		if err != nil {
			return err
		}
		// BinaryParts: an empty dictionary (all indices null) may have no
		// offsets buffer.
		offs, _ := BinaryParts(dict)
		for i, j := range idx {
			if j >= 0 {
				widths[i] += 5 + offs[j+1] - offs[j]
			} else {
				widths[i]++
			}
		}
	default:
		w := fixedWidth(c.DataType().ID())
		if w < 0 {
			return fmt.Errorf("vector: key of %s: %w", TypeName(c.DataType()), ErrType)
		}
		for i := range widths {
			widths[i] += 1 + w
		}
		if bm != nil {
			for i := range widths {
				if !bitutil.BitIsSet(bm, off+i) {
					widths[i] -= w
				}
			}
		}
	}
	return nil
}

func addVarWidths(widths []int32, offs []int32, bm []byte, off int) {
	for i := range widths {
		widths[i] += 5 + offs[i+1] - offs[i]
	}
	if bm != nil {
		for i := range widths {
			if !bitutil.BitIsSet(bm, off+i) {
				widths[i] -= 4 + offs[i+1] - offs[i]
			}
		}
	}
}

// mixIn folds one column's hash of a row into the row's running hash.
func mixIn(h, v uint64) uint64 { return bits.RotateLeft64(h, 27)*0x9e3779b97f4a7c15 ^ v }

// writeKeys writes leaf l's part of each row's key; exact keeps floats'
// bits (value encoding) instead of normalizing them for grouping.
func writeKeys(buf []byte, pos []int32, h []uint64, l keyLeaf, exact bool) error {
	c := l.arr
	// The values' offset applies even when there is no bitmap (validBits
	// then reports 0).
	bm, _ := validBits(c)
	off := c.Data().Offset()
	if l.structFlag {
		for i := range pos {
			if bm == nil || bitutil.BitIsSet(bm, off+i) {
				buf[pos[i]] = 1
			} else {
				buf[pos[i]] = 0
			}
			pos[i]++
		}
		return nil
	}
	if l.list != nil {
		l.list.writeKeys(buf, pos, h, c.(*array.List))
		return nil
	}
	switch a := c.(type) {
	case *array.String, *array.Binary:
		offs, data := BinaryParts(a)
		writeVarKeys(buf, pos, h, offs, data, nil, bm, off)
	case *array.Dictionary:
		idx, err := DictionaryIndices(a)
		if err != nil {
			return err
		}
		offs, data := BinaryParts(a.Dictionary())
		writeVarKeys(buf, pos, h, offs, data, idx, nil, 0)
	case *array.Boolean:
		raw, doff := bufferBytes(a.Data(), 1), a.Data().Offset()
		for i := range pos {
			p := pos[i]
			if bm != nil && !bitutil.BitIsSet(bm, off+i) {
				buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
				continue
			}
			v := byte(0)
			if bitutil.BitIsSet(raw, doff+i) {
				v = 1
			}
			buf[p], buf[p+1], pos[i], h[i] = 1, v, p+2, mixIn(h[i], uint64(v)+1)
		}
	case *array.Float64:
		if exact {
			writeExactFloat64s(buf, pos, h, a.Float64Values(), bm, off)
			break
		}
		for i, v := range a.Float64Values() {
			p := pos[i]
			if bm != nil && !bitutil.BitIsSet(bm, off+i) {
				buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
				continue
			}
			word := floatKey(v)
			buf[p] = 1
			binary.LittleEndian.PutUint64(buf[p+1:], word)
			pos[i], h[i] = p+9, mixIn(h[i], fmix64(word))
		}
	case *array.Float32:
		writeFloat32Keys(buf, pos, h, a.Float32Values(), bm, off, exact)
	default:
		w := fixedWidth(c.DataType().ID())
		if w < 0 {
			return fmt.Errorf("vector: key of %s: %w", TypeName(c.DataType()), ErrType)
		}
		var raw []byte
		if w > 0 {
			// The slice offset applies even when validBits reports none.
			raw = bufferBytes(c.Data(), 1)[c.Data().Offset()*int(w):]
		}
		for i := range pos {
			p := pos[i]
			if bm != nil && !bitutil.BitIsSet(bm, off+i) {
				buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
				continue
			}
			buf[p] = 1
			v := buf[p+1 : p+1+w]
			copy(v, raw[i*int(w):(i+1)*int(w)])
			pos[i], h[i] = p+1+w, mixIn(h[i], hashBytes(v))
		}
	}
	return nil
}

// writeExactFloat64s writes doubles with their bits (a value encoder's);
// a loop of its own keeps the key path's loop free of the test.
func writeExactFloat64s(buf []byte, pos []int32, h []uint64, vals []float64, bm []byte, off int) {
	for i, v := range vals {
		p := pos[i]
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
			continue
		}
		word := math.Float64bits(v)
		buf[p] = 1
		binary.LittleEndian.PutUint64(buf[p+1:], word)
		pos[i], h[i] = p+9, mixIn(h[i], fmix64(word))
	}
}

// writeVarKeys writes string or binary keys; idx, when set, maps rows to
// dictionary entries (-1 for null).
func writeVarKeys(buf []byte, pos []int32, h []uint64, offs []int32, data []byte, idx []int32, bm []byte, off int) {
	for i := range pos {
		p := pos[i]
		j := int32(i)
		if idx != nil {
			j = idx[i]
		}
		if j < 0 || bm != nil && !bitutil.BitIsSet(bm, off+i) {
			buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
			continue
		}
		v := data[offs[j]:offs[j+1]]
		buf[p] = 1
		binary.LittleEndian.PutUint32(buf[p+1:], uint32(len(v)))
		copy(buf[p+5:], v)
		pos[i], h[i] = p+5+int32(len(v)), mixIn(h[i], hashBytes(v))
	}
}

// hashBytes is a stable 64-bit hash of b, eight bytes at a time.
func hashBytes(b []byte) uint64 {
	h := uint64(len(b)) * 0x87c37b91114253d5
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		h = bits.RotateLeft64(h^(w*0x4cf5ad432745937f), 31) * 0x9e3779b97f4a7c15
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	h ^= tail * 0x52dce729da3ed5b9
	return fmix64(h)
}

// DecodeFixed turns fixed-path key words back into a column of the key
// type; nulls[i] marks a null key (nulls may be nil).
func (e *KeyEncoder) DecodeFixed(mem memory.Allocator, words []uint64, nulls []bool) (arrow.Array, error) {
	b := array.NewBuilder(mem, e.types[0])
	defer b.Release()
	b.Reserve(len(words))
	for i, w := range words {
		if nulls != nil && nulls[i] {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.UnsafeAppend(int64(w))
		case *array.TimestampBuilder:
			bb.UnsafeAppend(arrow.Timestamp(int64(w)))
		case *array.Int32Builder:
			bb.UnsafeAppend(int32(int64(w)))
		case *array.Date32Builder:
			bb.UnsafeAppend(arrow.Date32(int64(w)))
		case *array.Int16Builder:
			bb.UnsafeAppend(int16(int64(w)))
		case *array.Int8Builder:
			bb.UnsafeAppend(int8(int64(w)))
		case *array.Float64Builder:
			bb.UnsafeAppend(math.Float64frombits(w))
		case *array.BooleanBuilder:
			bb.UnsafeAppend(w != 0)
		default:
			return nil, fmt.Errorf("vector: decode fixed key of %s: %w", TypeName(e.types[0]), ErrType)
		}
	}
	return b.NewArray(), nil
}

// DecodeKeys turns byte keys (as Key returned them) back into key columns.
func (e *KeyEncoder) DecodeKeys(mem memory.Allocator, keys [][]byte) ([]arrow.Array, error) {
	builders := make([]array.Builder, len(e.types))
	for i, t := range e.types {
		builders[i] = array.NewBuilder(mem, t)
		// Sized once for every key (a struct's builder reserves its
		// fields'): appended row by row, each buffer (values, offsets,
		// validity) grew by doubling, about twice its final bytes of
		// fresh memory a call (q8's evicted and new person groups every
		// epoch). A string's bytes still grow as they come.
		builders[i].Reserve(len(keys))
	}
	defer func() {
		for _, b := range builders {
			b.Release()
		}
	}()
	for k, key := range keys {
		rest := key
		for _, b := range builders {
			var err error
			rest, err = decodeValue(b, rest)
			if err != nil {
				return nil, fmt.Errorf("vector: decode key %d: %w", k, err)
			}
		}
		if len(rest) != 0 {
			return nil, fmt.Errorf("vector: decode key %d: %d trailing bytes", k, len(rest))
		}
	}
	out := make([]arrow.Array, len(builders))
	for i, b := range builders {
		out[i] = b.NewArray()
	}
	return out, nil
}

var errShortKey = fmt.Errorf("key bytes too short")

// skipFields consumes the encodings of the fields of a struct.
func skipFields(st *arrow.StructType, key []byte) ([]byte, error) {
	for _, f := range st.Fields() {
		var err error
		if key, err = skipValue(Unwrap(f.Type), key); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// skipValue consumes one value's encoding of type dt.
func skipValue(dt arrow.DataType, key []byte) ([]byte, error) {
	if len(key) < 1 {
		return nil, errShortKey
	}
	flag, key := key[0], key[1:]
	switch dt.ID() {
	case arrow.STRUCT:
		return skipFields(dt.(*arrow.StructType), key)
	case arrow.LIST:
		if flag == 0 {
			return key, nil
		}
		return skipListElems(dt.(*arrow.ListType), key)
	case arrow.STRING, arrow.BINARY:
		if flag == 0 {
			return key, nil
		}
		if len(key) < 4 {
			return nil, errShortKey
		}
		l := int(binary.LittleEndian.Uint32(key))
		if len(key) < 4+l {
			return nil, errShortKey
		}
		return key[4+l:], nil
	}
	if flag == 0 {
		return key, nil
	}
	w := int(fixedWidth(dt.ID()))
	if w < 0 || len(key) < w {
		return nil, errShortKey
	}
	return key[w:], nil
}

func decodeValue(b array.Builder, key []byte) ([]byte, error) {
	if len(key) < 1 {
		return nil, errShortKey
	}
	flag, key := key[0], key[1:]
	if flag == 0 {
		b.AppendNull()
		if sb, ok := b.(*array.StructBuilder); ok {
			// A null struct's fields were encoded (as nulls) after its
			// flag; skip them.
			return skipFields(sb.Type().(*arrow.StructType), key)
		}
		return key, nil
	}
	need := func(n int) error {
		if len(key) < n {
			return errShortKey
		}
		return nil
	}
	switch bb := b.(type) {
	case *array.StringBuilder, *array.BinaryBuilder:
		if err := need(4); err != nil {
			return nil, err
		}
		l := int(binary.LittleEndian.Uint32(key))
		if err := need(4 + l); err != nil {
			return nil, err
		}
		v := key[4 : 4+l]
		if sb, ok := bb.(*array.StringBuilder); ok {
			sb.BinaryBuilder.Append(v)
		} else {
			bb.(*array.BinaryBuilder).Append(v)
		}
		return key[4+l:], nil
	case *array.ListBuilder:
		return decodeListValue(bb, key)
	case *array.StructBuilder:
		bb.Append(true)
		for f := 0; f < bb.NumField(); f++ {
			var err error
			key, err = decodeValue(bb.FieldBuilder(f), key)
			if err != nil {
				return nil, err
			}
		}
		return key, nil
	}
	w := int(fixedWidth(b.Type().ID()))
	if w < 0 {
		return nil, fmt.Errorf("decode %s: %w", TypeName(b.Type()), ErrType)
	}
	if err := need(w); err != nil {
		return nil, err
	}
	v := key[:w]
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v[0] != 0)
	case *array.Int8Builder:
		bb.Append(int8(v[0]))
	case *array.Int16Builder:
		bb.Append(int16(binary.LittleEndian.Uint16(v)))
	case *array.Int32Builder:
		bb.Append(int32(binary.LittleEndian.Uint32(v)))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(binary.LittleEndian.Uint32(v)))
	case *array.Int64Builder:
		bb.Append(int64(binary.LittleEndian.Uint64(v)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(binary.LittleEndian.Uint64(v)))
	case *array.MonthIntervalBuilder:
		bb.Append(arrow.MonthInterval(binary.LittleEndian.Uint32(v)))
	case *array.DurationBuilder:
		bb.Append(arrow.Duration(binary.LittleEndian.Uint64(v)))
	case *array.Float64Builder:
		bb.Append(math.Float64frombits(binary.LittleEndian.Uint64(v)))
	case *array.Float32Builder:
		bb.Append(math.Float32frombits(binary.LittleEndian.Uint32(v)))
	case *array.Decimal128Builder:
		lo := binary.LittleEndian.Uint64(v)
		hi := int64(binary.LittleEndian.Uint64(v[8:]))
		bb.Append(decimalFromParts(hi, lo))
	case *array.NullBuilder:
		bb.AppendNull()
	default:
		return nil, fmt.Errorf("decode %s: %w", TypeName(b.Type()), ErrType)
	}
	return key[w:], nil
}
