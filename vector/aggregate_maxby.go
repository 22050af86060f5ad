package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// max_by(x, ord) and min_by(x, ord), as Spark's MaxMinBy: the value of x
// on the row whose ord is the greatest (least). Rows whose ord is NULL are
// skipped; x may be NULL, and then so is the result. On a tie of ord the
// later row wins (Spark's update keeps the old value only when its
// ordering is strictly better), and when partial states merge the right
// (later) one wins a tie. The partial state is (value, ordering), the
// ordering NULL while the group has seen no row.
//
// Both sides are stored per group in typed slices; a batch is folded by a
// typed loop over the ordering column that notes the rows taking the
// lead, whose values are then copied in bulk (a later row of a group
// overwrites an earlier one).
type maxByAcc struct {
	isMax        bool
	valType      arrow.DataType
	ordType      arrow.DataType
	ord          byOrdering
	vals         byValues
	has          []bool // the group has an ordering (it saw a row)
	null         []bool // the group's value is NULL
	rows, groups []int32
}

// byOrdering keeps one ordering value per group and folds batches of them.
type byOrdering interface {
	resize(n int)
	// lead folds ord's valid rows into the groups gids: a row whose value
	// is at least as extreme as its group's (or whose group has none)
	// becomes the group's, and its index and group are appended.
	lead(ord arrow.Array, gids []int32, has []bool, isMax bool, rows, groups []int32) ([]int32, []int32)
	// build returns the orderings of groups gids.
	build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array
	clear(gids []int32)
	heapBytes() int64
}

// byValues keeps one value of any fixed-width, boolean, string or binary
// type per group.
type byValues interface {
	resize(n int)
	copyRows(arr arrow.Array, rows, groups []int32)
	build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array
	clear(gids []int32)
	heapBytes() int64
}

// sparkLess orders numbers as Spark does: NaN equals NaN and is greater
// than every other value; -0.0 equals 0.0.
func sparkLess[T int8 | int16 | int32 | int64 | float32 | float64](a, b T) bool {
	return a < b || (b != b && a == a)
}

// fixedOrdering is the ordering of integral, floating-point, date,
// timestamp and interval values (stored as the array's own values).
type fixedOrdering[T int8 | int16 | int32 | int64 | float32 | float64] struct {
	dt   arrow.DataType
	vals []T
}

func (o *fixedOrdering[T]) resize(n int)       { o.vals = growZero(o.vals, n) }
func (o *fixedOrdering[T]) heapBytes() int64   { return sliceBytes(o.vals) }
func (o *fixedOrdering[T]) clear(gids []int32) {}
func (o *fixedOrdering[T]) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newFixedArray(mem, o.dt, gatherOf(o.vals, gids), valid)
}

func (o *fixedOrdering[T]) lead(ord arrow.Array, gids []int32, has []bool, isMax bool, rows, groups []int32) ([]int32, []int32) {
	src := rawValues[T](ord)
	bm, off := validity(ord)
	cur := o.vals
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		v := src[i]
		if has[g] && (isMax && sparkLess(v, cur[g]) || !isMax && sparkLess(cur[g], v)) {
			continue
		}
		cur[g], has[g] = v, true
		rows, groups = append(rows, int32(i)), append(groups, g)
	}
	return rows, groups
}

// boolOrdering orders false before true.
type boolOrdering struct{ vals []bool }

func (o *boolOrdering) resize(n int)       { o.vals = growZero(o.vals, n) }
func (o *boolOrdering) heapBytes() int64   { return sliceBytes(o.vals) }
func (o *boolOrdering) clear(gids []int32) {}
func (o *boolOrdering) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newBoolArray(mem, gatherOf(o.vals, gids), valid)
}

func (o *boolOrdering) lead(ord arrow.Array, gids []int32, has []bool, isMax bool, rows, groups []int32) ([]int32, []int32) {
	raw, roff := bufferBytes(ord.Data(), 1), ord.Data().Offset()
	bm, off := validity(ord)
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		v := bitSet(raw, roff+i)
		if has[g] && (isMax && o.vals[g] && !v || !isMax && !o.vals[g] && v) {
			continue
		}
		o.vals[g], has[g] = v, true
		rows, groups = append(rows, int32(i)), append(groups, g)
	}
	return rows, groups
}

// decimalOrdering orders decimals of one scale by their unscaled values.
type decimalOrdering struct {
	dt   arrow.DataType
	vals []decimal128.Num
}

func (o *decimalOrdering) resize(n int)       { o.vals = growZero(o.vals, n) }
func (o *decimalOrdering) heapBytes() int64   { return sliceBytes(o.vals) }
func (o *decimalOrdering) clear(gids []int32) {}
func (o *decimalOrdering) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newFixedArray(mem, o.dt, gatherOf(o.vals, gids), valid)
}

func (o *decimalOrdering) lead(ord arrow.Array, gids []int32, has []bool, isMax bool, rows, groups []int32) ([]int32, []int32) {
	src := rawValues[decimal128.Num](ord)
	bm, off := validity(ord)
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		v := src[i]
		if has[g] && (isMax && v.Less(o.vals[g]) || !isMax && o.vals[g].Less(v)) {
			continue
		}
		o.vals[g], has[g] = v, true
		rows, groups = append(rows, int32(i)), append(groups, g)
	}
	return rows, groups
}

// bytesOrdering orders strings and binaries bytewise (as Spark's UTF8String
// and binary comparisons do). A leading value is copied: it outlives the
// batch.
type bytesOrdering struct {
	dt   arrow.DataType
	vals []string
}

func (o *bytesOrdering) resize(n int)     { o.vals = growZero(o.vals, n) }
func (o *bytesOrdering) heapBytes() int64 { return sliceBytes(o.vals) + stringBytes(o.vals) }
func (o *bytesOrdering) clear(gids []int32) {
	for _, g := range gids {
		o.vals[g] = ""
	}
}
func (o *bytesOrdering) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newBytesArray(mem, o.dt, gatherOf(o.vals, gids), valid)
}

func (o *bytesOrdering) lead(ord arrow.Array, gids []int32, has []bool, isMax bool, rows, groups []int32) ([]int32, []int32) {
	offs, data := BinaryParts(ord)
	bm, off := validity(ord)
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		v := unsafeString(data[offs[i]:offs[i+1]])
		if has[g] && (isMax && v < o.vals[g] || !isMax && o.vals[g] < v) {
			continue
		}
		o.vals[g], has[g] = string(data[offs[i]:offs[i+1]]), true
		rows, groups = append(rows, int32(i)), append(groups, g)
	}
	return rows, groups
}

// stringBytes is the heap the strings of s hold.
func stringBytes(s []string) int64 {
	n := int64(0)
	for _, v := range s {
		n += int64(len(v))
	}
	return n
}

// newByOrdering returns the ordering store of t, or false when max_by and
// min_by cannot order by it.
func newByOrdering(t arrow.DataType) (byOrdering, bool) {
	switch t.ID() {
	case arrow.INT8:
		return &fixedOrdering[int8]{dt: t}, true
	case arrow.INT16:
		return &fixedOrdering[int16]{dt: t}, true
	case arrow.INT32, arrow.DATE32, arrow.INTERVAL_MONTHS:
		return &fixedOrdering[int32]{dt: t}, true
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION:
		return &fixedOrdering[int64]{dt: t}, true
	case arrow.FLOAT32:
		return &fixedOrdering[float32]{dt: t}, true
	case arrow.FLOAT64:
		return &fixedOrdering[float64]{dt: t}, true
	case arrow.BOOL:
		return &boolOrdering{}, true
	case arrow.DECIMAL128:
		return &decimalOrdering{dt: t}, true
	case arrow.STRING, arrow.BINARY:
		return &bytesOrdering{dt: t}, true
	}
	return nil, false
}

// fixedByValues stores values of a fixed-width type by their bits.
type fixedByValues[T int8 | int16 | int32 | int64 | decimal128.Num] struct {
	dt   arrow.DataType
	vals []T
}

func (f *fixedByValues[T]) resize(n int)       { f.vals = growZero(f.vals, n) }
func (f *fixedByValues[T]) heapBytes() int64   { return sliceBytes(f.vals) }
func (f *fixedByValues[T]) clear(gids []int32) {}
func (f *fixedByValues[T]) copyRows(arr arrow.Array, rows, groups []int32) {
	src := rawValues[T](arr)
	for j, r := range rows {
		f.vals[groups[j]] = src[r]
	}
}
func (f *fixedByValues[T]) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newFixedArray(mem, f.dt, gatherOf(f.vals, gids), valid)
}

type boolByValues struct{ vals []bool }

func (b *boolByValues) resize(n int)       { b.vals = growZero(b.vals, n) }
func (b *boolByValues) heapBytes() int64   { return sliceBytes(b.vals) }
func (b *boolByValues) clear(gids []int32) {}
func (b *boolByValues) copyRows(arr arrow.Array, rows, groups []int32) {
	raw, off := bufferBytes(arr.Data(), 1), arr.Data().Offset()
	for j, r := range rows {
		b.vals[groups[j]] = bitSet(raw, off+int(r))
	}
}
func (b *boolByValues) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newBoolArray(mem, gatherOf(b.vals, gids), valid)
}

// bytesByValues copies strings and binaries out of the batch.
type bytesByValues struct {
	dt   arrow.DataType
	vals []string
}

func (b *bytesByValues) resize(n int)     { b.vals = growZero(b.vals, n) }
func (b *bytesByValues) heapBytes() int64 { return sliceBytes(b.vals) + stringBytes(b.vals) }
func (b *bytesByValues) clear(gids []int32) {
	for _, g := range gids {
		b.vals[g] = ""
	}
}
func (b *bytesByValues) copyRows(arr arrow.Array, rows, groups []int32) {
	offs, data := BinaryParts(arr)
	for j, r := range rows {
		b.vals[groups[j]] = string(data[offs[r]:offs[r+1]])
	}
}
func (b *bytesByValues) build(mem memory.Allocator, gids []int32, valid []bool) arrow.Array {
	return newBytesArray(mem, b.dt, gatherOf(b.vals, gids), valid)
}

// nullByValues is the value store of a NULL-typed x: every value is NULL.
type nullByValues struct{}

func (nullByValues) resize(int)                             {}
func (nullByValues) heapBytes() int64                       { return 0 }
func (nullByValues) clear([]int32)                          {}
func (nullByValues) copyRows(arrow.Array, []int32, []int32) {}
func (nullByValues) build(mem memory.Allocator, gids []int32, _ []bool) arrow.Array {
	return array.NewNull(len(gids))
}

// newByValues returns the value store of t, or false when max_by and
// min_by cannot return it.
func newByValues(t arrow.DataType) (byValues, bool) {
	switch t.ID() {
	case arrow.NULL:
		return nullByValues{}, true
	case arrow.BOOL:
		return &boolByValues{}, true
	case arrow.STRING, arrow.BINARY:
		return &bytesByValues{dt: t}, true
	case arrow.DECIMAL128:
		return &fixedByValues[decimal128.Num]{dt: t}, true
	}
	fw, ok := t.(arrow.FixedWidthDataType)
	if !ok {
		return nil, false
	}
	switch fw.BitWidth() {
	case 8:
		return &fixedByValues[int8]{dt: t}, true
	case 16:
		return &fixedByValues[int16]{dt: t}, true
	case 32:
		return &fixedByValues[int32]{dt: t}, true
	case 64:
		return &fixedByValues[int64]{dt: t}, true
	}
	return nil, false
}

// bindMaxBy binds max_by (isMax) or min_by over values of type val ordered
// by values of type ord.
func bindMaxBy(isMax bool, val, ord arrow.DataType) (*maxByAcc, error) {
	name := map[bool]string{true: "max_by", false: "min_by"}[isMax]
	o, ok := newByOrdering(ord)
	if !ok {
		return nil, fmt.Errorf("%s cannot order by %s: %w", name, TypeName(ord), ErrType)
	}
	v, ok := newByValues(val)
	if !ok {
		return nil, fmt.Errorf("%s of %s is not supported: %w", name, TypeName(val), ErrType)
	}
	return &maxByAcc{isMax: isMax, valType: val, ordType: ord, ord: o, vals: v}, nil
}

// statePartOrdering names the partial state column of max_by's and
// min_by's leading ordering value.
const statePartOrdering = "ordering"

func (m *maxByAcc) stateTypes() []arrow.DataType { return []arrow.DataType{m.valType, m.ordType} }

func (m *maxByAcc) resize(n int) {
	m.ord.resize(n)
	m.vals.resize(n)
	m.has = growZero(m.has, n)
	m.null = growZero(m.null, n)
}

func (m *maxByAcc) heapBytes() int64 {
	return m.ord.heapBytes() + m.vals.heapBytes() + sliceBytes(m.has) + sliceBytes(m.null) +
		sliceBytes(m.rows) + sliceBytes(m.groups)
}

// update folds (value, ordering) pairs: input rows and partial states
// alike, since a state is one candidate row of its group.
func (m *maxByAcc) update(gids []int32, args []arrow.Array) error {
	val, ord := args[0], args[1]
	rows, groups := m.ord.lead(ord, gids, m.has, m.isMax, m.rows[:0], m.groups[:0])
	bm, off := validity(val)
	if val.DataType().ID() == arrow.NULL {
		for _, g := range groups {
			m.null[g] = true
		}
	} else {
		for j, r := range rows {
			m.null[groups[j]] = bm != nil && !bitSet(bm, off+int(r))
		}
	}
	m.vals.copyRows(val, rows, groups)
	m.rows, m.groups = rows, groups
	return nil
}

func (m *maxByAcc) values(mem memory.Allocator, gids []int32) arrow.Array {
	valid := make([]bool, len(gids))
	for i, g := range gids {
		valid[i] = m.has[g] && !m.null[g]
	}
	return m.vals.build(mem, gids, valid)
}

func (m *maxByAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{m.values(mem, gids), m.ord.build(mem, gids, gatherOf(m.has, gids))}, nil
}

func (m *maxByAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return m.values(mem, groupRange(lo, hi)), nil
}

func (m *maxByAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	return m.stateAt(mem, groupRange(lo, hi), rows)
}

func (m *maxByAcc) reset(gids []int32) {
	for _, g := range gids {
		m.has[g], m.null[g] = false, false
	}
	m.ord.clear(gids)
	m.vals.clear(gids)
}

// groupRange lists the group ids lo..hi-1.
func groupRange(lo, hi int) []int32 {
	out := make([]int32, hi-lo)
	for i := range out {
		out[i] = int32(lo + i)
	}
	return out
}
