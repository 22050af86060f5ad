package vector

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Per-group values of arbitrary type: min, max, first and last, and the
// array builders that turn per-group state into output columns.

// validityBuffer turns per-row validity into a bitmap; nil when every row is
// valid (or valid is nil).
func validityBuffer(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bm := buf.Bytes()
	clear(bm)
	for i, v := range valid {
		if v {
			bitutil.SetBit(bm, i)
		}
	}
	return buf, nulls
}

// newFixedArray builds an array of the fixed-width type dt from vals; valid,
// when not nil, marks the non-null rows.
func newFixedArray[T any](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(vals) * int(unsafe.Sizeof(zero)))
	copy(castSlice[T](buf.Bytes()), vals)
	bm, nulls := validityBuffer(mem, valid)
	data := array.NewData(dt, len(vals), []*memory.Buffer{bm, buf}, nil, nulls, 0)
	buf.Release()
	if bm != nil {
		bm.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// newBoolArray builds a boolean array.
func newBoolArray(mem memory.Allocator, vals []bool, valid []bool) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(vals)))))
	b := buf.Bytes()
	clear(b)
	for i, v := range vals {
		if v {
			bitutil.SetBit(b, i)
		}
	}
	bm, nulls := validityBuffer(mem, valid)
	data := array.NewData(Boolean, len(vals), []*memory.Buffer{bm, buf}, nil, nulls, 0)
	buf.Release()
	if bm != nil {
		bm.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// newBytesArray builds a string or binary array.
func newBytesArray(mem memory.Allocator, dt arrow.DataType, vals []string, valid []bool) arrow.Array {
	total := 0
	for i, v := range vals {
		if valid == nil || valid[i] {
			total += len(v)
		}
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(vals) + 1) * 4)
	offs := castSlice[int32](offBuf.Bytes())
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	out := dataBuf.Bytes()
	pos := int32(0)
	for i, v := range vals {
		offs[i] = pos
		if valid == nil || valid[i] {
			pos += int32(copy(out[pos:], v))
		}
	}
	offs[len(vals)] = pos
	bm, nulls := validityBuffer(mem, valid)
	data := array.NewData(dt, len(vals), []*memory.Buffer{bm, offBuf, dataBuf}, nil, nulls, 0)
	offBuf.Release()
	dataBuf.Release()
	if bm != nil {
		bm.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// valueKind is how per-group values of a type are stored.
type valueKind int

const (
	valInt64   valueKind = iota // bigint, timestamp
	valInt32                    // int, date
	valFloat64                  // double
	valBool                     // boolean, stored as 0/1 in int32
	valDecimal                  // decimal(p,s)
	valBytes                    // string, binary
)

func valueKindOf(t arrow.DataType) (valueKind, bool) {
	switch t.ID() {
	case arrow.INT64, arrow.TIMESTAMP:
		return valInt64, true
	case arrow.INT32, arrow.DATE32:
		return valInt32, true
	case arrow.FLOAT64:
		return valFloat64, true
	case arrow.BOOL:
		return valBool, true
	case arrow.DECIMAL128:
		return valDecimal, true
	case arrow.STRING, arrow.BINARY:
		return valBytes, true
	}
	return 0, false
}

// rawValues returns the values of a fixed-width array as []T, offset
// applied.
func rawValues[T any](arr arrow.Array) []T {
	return castSlice[T](bufferBytes(arr.Data(), 1))[arr.Data().Offset():][:arr.Len()]
}

// boolsAsInt32 expands a boolean array into 0/1 values.
func boolsAsInt32(arr arrow.Array, scratch []int32) []int32 {
	scratch = grow(scratch, arr.Len())
	raw, off := bufferBytes(arr.Data(), 1), arr.Data().Offset()
	for i := range scratch[:arr.Len()] {
		scratch[i] = int32(raw[(off+i)>>3]>>((off+i)&7)) & 1
	}
	return scratch[:arr.Len()]
}

// unsafeString views b as a string without copying (for comparisons only).
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// minMaxAcc is min(x) and max(x). Numbers start at the identity of the
// operation (so the loop is one compare per row); strings keep a has-flag.
// Both modes update the same way: a partial state's value is NULL when its
// group had none. A group's result is NULL when rows - nulls is zero.
type minMaxAcc struct {
	nullCounter
	isMax bool
	dt    arrow.DataType
	// narrow is the argument's and result's type when it is stored wider
	// (tinyint and smallint as int, float as double: exact, and order
	// preserving); nil otherwise.
	narrow arrow.DataType
	kind   valueKind
	i64    []int64
	i32    []int32
	f64    []float64
	decs   []decimal128.Num
	strs   []string
	// strBytes is the bytes of the strings strs holds (kept as they are
	// replaced, so that the state's size is known without a scan).
	strBytes int64
	has      []bool
	bools    []int32 // scratch
	fin      liveScratch
}

func (m *minMaxAcc) resize(n int) { m.grow(nil, n) }

func (m *minMaxAcc) grow(g *grower, n int) {
	m.nullCounter.grow(g, n)
	switch m.kind {
	case valInt64:
		m.i64 = growFillWith(g, m.i64, n, pick(m.isMax, int64(math.MinInt64), math.MaxInt64))
	case valInt32, valBool:
		m.i32 = growFillWith(g, m.i32, n, pick(m.isMax, int32(math.MinInt32), math.MaxInt32))
	case valFloat64:
		// NaN is larger than every double (Spark), so it is min's identity.
		m.f64 = growFillWith(g, m.f64, n, pick(m.isMax, math.Inf(-1), math.NaN()))
	case valDecimal:
		m.decs = growFillWith(g, m.decs, n, pick(m.isMax, decimal128.New(math.MinInt64, 0), decimal128.New(math.MaxInt64, math.MaxUint64)))
	case valBytes:
		m.strs = growZeroWith(g, m.strs, n)
		m.has = growZeroWith(g, m.has, n)
	}
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

func (m *minMaxAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	bm, off := validity(arg)
	m.countNulls(gids, bm, off)
	switch m.kind {
	case valInt64:
		minMaxOrdered(m.i64, gids, rawValues[int64](arg), bm, off, m.isMax)
	case valInt32:
		minMaxOrdered(m.i32, gids, rawValues[int32](arg), bm, off, m.isMax)
	case valBool:
		m.bools = boolsAsInt32(arg, m.bools)
		minMaxOrdered(m.i32, gids, m.bools, bm, off, m.isMax)
	case valFloat64:
		minMaxFloat(m.f64, gids, rawValues[float64](arg), bm, off, m.isMax)
	case valDecimal:
		for i, v := range rawValues[decimal128.Num](arg) {
			if bm != nil && !bitSet(bm, off+i) {
				continue
			}
			g := gids[i]
			if m.isMax && v.Greater(m.decs[g]) || !m.isMax && v.Less(m.decs[g]) {
				m.decs[g] = v
			}
		}
	case valBytes:
		offs, data := BinaryParts(arg)
		for i, g := range gids {
			if bm != nil && !bitSet(bm, off+i) {
				continue
			}
			v := unsafeString(data[offs[i]:offs[i+1]])
			if !m.has[g] || m.isMax && v > m.strs[g] || !m.isMax && v < m.strs[g] {
				m.strBytes += int64(len(v) - len(m.strs[g]))
				m.strs[g] = strings.Clone(v)
				m.has[g] = true
			}
		}
	default:
		return fmt.Errorf("vector: min/max of %s: %w", TypeName(arg.DataType()), ErrType)
	}
	return nil
}

func minMaxOrdered[T int32 | int64](acc []T, gids []int32, vals []T, bm []byte, off int, isMax bool) {
	gids = gids[:len(vals)]
	switch {
	case bm == nil && isMax:
		for i, v := range vals {
			g := gids[i]
			acc[g] = max(acc[g], v)
		}
	case bm == nil:
		for i, v := range vals {
			g := gids[i]
			acc[g] = min(acc[g], v)
		}
	default:
		for i, v := range vals {
			if !bitSet(bm, off+i) {
				continue
			}
			g := gids[i]
			if isMax {
				acc[g] = max(acc[g], v)
			} else {
				acc[g] = min(acc[g], v)
			}
		}
	}
}

// minMaxFloat orders NaN above every other double, as Spark does (Go's
// min and max propagate NaN instead).
func minMaxFloat(acc []float64, gids []int32, vals []float64, bm []byte, off int, isMax bool) {
	gids = gids[:len(vals)]
	for i, v := range vals {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		g := gids[i]
		cur := acc[g]
		if isMax {
			if v > cur || v != v {
				acc[g] = v
			}
		} else if v < cur || cur != cur && v == v {
			acc[g] = v
		}
	}
}

func (m *minMaxAcc) final(mem memory.Allocator, lo, hi int, rows []int64) (arrow.Array, error) {
	valid := make([]bool, hi-lo)
	for g := lo; g < hi; g++ {
		valid[g-lo] = m.valid(g, rows) > 0
	}
	switch {
	case m.narrow != nil && m.narrow.ID() == arrow.INT8:
		return newFixedArray(mem, m.narrow, narrowSlice[int32, int8](m.i32[lo:hi]), valid), nil
	case m.narrow != nil && m.narrow.ID() == arrow.INT16:
		return newFixedArray(mem, m.narrow, narrowSlice[int32, int16](m.i32[lo:hi]), valid), nil
	case m.narrow != nil && m.narrow.ID() == arrow.FLOAT32:
		return newFixedArray(mem, m.narrow, narrowSlice[float64, float32](m.f64[lo:hi]), valid), nil
	}
	switch m.kind {
	case valInt64:
		return newFixedArray(mem, m.dt, m.i64[lo:hi], valid), nil
	case valInt32:
		return newFixedArray(mem, m.dt, m.i32[lo:hi], valid), nil
	case valBool:
		vals := make([]bool, hi-lo)
		for i, v := range m.i32[lo:hi] {
			vals[i] = v != 0
		}
		return newBoolArray(mem, vals, valid), nil
	case valFloat64:
		return newFixedArray(mem, m.dt, m.f64[lo:hi], valid), nil
	case valDecimal:
		return newFixedArray(mem, m.dt, m.decs[lo:hi], valid), nil
	}
	return newBytesArray(mem, m.dt, m.strs[lo:hi], valid), nil
}

func (m *minMaxAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	a, err := m.final(mem, lo, hi, rows)
	return []arrow.Array{a}, err
}

// narrowSlice converts values that came from a narrower type back to it.
func narrowSlice[S int32 | float64, D int8 | int16 | float32](src []S) []D {
	out := make([]D, len(src))
	for i, v := range src {
		out[i] = D(v)
	}
	return out
}

// minMaxStorage is how min and max store values of t: the value kind, and
// for tinyint, smallint and float the wider type they are kept as (nil
// when t is stored as it is).
func minMaxStorage(t arrow.DataType) (valueKind, arrow.DataType, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16:
		return valInt32, Int32, true
	case arrow.FLOAT32:
		return valFloat64, Float64, true
	}
	k, ok := valueKindOf(t)
	return k, nil, ok
}

// groupValues stores one value per group, copied from input rows in bulk.
type groupValues interface {
	resize(n int)
	// copyRows sets the value of group groups[j] to arr's row rows[j], in
	// order (a later row of the same group wins).
	copyRows(arr arrow.Array, rows, groups []int32)
	build(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array
	heapBytes() int64
}

type fixedValues[T any] struct {
	dt   arrow.DataType
	vals []T
}

func (f *fixedValues[T]) resize(n int)          { f.vals = growZero(f.vals, n) }
func (f *fixedValues[T]) grow(g *grower, n int) { f.vals = growZeroWith(g, f.vals, n) }
func (f *fixedValues[T]) copyRows(arr arrow.Array, rows, groups []int32) {
	src := rawValues[T](arr)
	for j, r := range rows {
		f.vals[groups[j]] = src[r]
	}
}
func (f *fixedValues[T]) build(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	return newFixedArray(mem, f.dt, f.vals[lo:hi], valid)
}

type boolValues struct{ vals []bool }

func (b *boolValues) resize(n int)          { b.vals = growZero(b.vals, n) }
func (b *boolValues) grow(g *grower, n int) { b.vals = growZeroWith(g, b.vals, n) }
func (b *boolValues) copyRows(arr arrow.Array, rows, groups []int32) {
	a := arr.(*array.Boolean)
	for j, r := range rows {
		b.vals[groups[j]] = a.Value(int(r))
	}
}
func (b *boolValues) build(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	return newBoolArray(mem, b.vals[lo:hi], valid)
}

type bytesValues struct {
	dt   arrow.DataType
	vals []string
	// bytes is the bytes of the strings vals holds, kept as they are
	// replaced (the state's size without a scan).
	bytes int64
}

func (b *bytesValues) resize(n int)          { b.vals = growZero(b.vals, n) }
func (b *bytesValues) grow(g *grower, n int) { b.vals = growZeroWith(g, b.vals, n) }
func (b *bytesValues) copyRows(arr arrow.Array, rows, groups []int32) {
	offs, data := BinaryParts(arr)
	for j, r := range rows {
		g := groups[j]
		b.bytes += int64(offs[r+1]-offs[r]) - int64(len(b.vals[g]))
		b.vals[g] = string(data[offs[r]:offs[r+1]])
	}
}
func (b *bytesValues) build(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	return newBytesArray(mem, b.dt, b.vals[lo:hi], valid)
}

func newGroupValues(t arrow.DataType) (groupValues, bool) {
	// The narrow numbers keep their own width: first/last only copy values
	// (Spark's first(smallint) is a smallint), so no widening is needed.
	switch t.ID() {
	case arrow.INT8:
		return &fixedValues[int8]{dt: t}, true
	case arrow.INT16:
		return &fixedValues[int16]{dt: t}, true
	case arrow.FLOAT32:
		return &fixedValues[float32]{dt: t}, true
	}
	kind, ok := valueKindOf(t)
	if !ok {
		return nil, false
	}
	switch kind {
	case valInt64:
		return &fixedValues[int64]{dt: t}, true
	case valInt32:
		return &fixedValues[int32]{dt: t}, true
	case valFloat64:
		return &fixedValues[float64]{dt: t}, true
	case valDecimal:
		return &fixedValues[decimal128.Num]{dt: t}, true
	case valBool:
		return &boolValues{}, true
	}
	return &bytesValues{dt: t}, true
}

// firstLastAcc is first(x) and last(x). A group is "set" once it took a
// value (which may be NULL unless IgnoreNulls). In state modes the
// candidates are the partial states whose set flag is true.
type firstLastAcc struct {
	last, ignoreNulls, merge bool
	set, null                []bool
	vals                     groupValues
	rows, groups             []int32 // scratch
}

func (f *firstLastAcc) resize(n int) { f.grow(nil, n) }

func (f *firstLastAcc) grow(g *grower, n int) {
	f.set = growZeroWith(g, f.set, n)
	f.null = growZeroWith(g, f.null, n)
	if gv, ok := f.vals.(interface{ grow(*grower, int) }); ok {
		gv.grow(g, n)
	} else {
		f.vals.resize(n)
	}
}

func (f *firstLastAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	bm, off := validity(arg)
	var setBits []byte
	var setBM []byte
	setOff := 0
	if f.merge {
		set := args[1]
		setBits = bufferBytes(set.Data(), 1)
		setBM, _ = validity(set)
		setOff = set.Data().Offset()
	}
	rows, groups := f.rows[:0], f.groups[:0]
	for i, g := range gids {
		isValid := bm == nil || bitSet(bm, off+i)
		if f.merge {
			if setBM != nil && !bitSet(setBM, setOff+i) || !bitSet(setBits, setOff+i) {
				continue
			}
		} else if f.ignoreNulls && !isValid {
			continue
		}
		if !f.last && f.set[g] {
			continue
		}
		f.set[g] = true
		f.null[g] = !isValid
		if isValid {
			rows = append(rows, int32(i))
			groups = append(groups, g)
		}
	}
	f.vals.copyRows(arg, rows, groups)
	f.rows, f.groups = rows, groups
	return nil
}

func (f *firstLastAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	valid := make([]bool, hi-lo)
	for g := lo; g < hi; g++ {
		valid[g-lo] = f.set[g] && !f.null[g]
	}
	return f.vals.build(mem, lo, hi, valid), nil
}

func (f *firstLastAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	v, err := f.final(mem, lo, hi, rows)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{v, newBoolArray(mem, f.set[lo:hi], nil)}, nil
}
