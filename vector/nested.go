package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Plumbing shared by the ARRAY, MAP and STRUCT kernels: a list or map
// column is taken apart into per-row element ranges over one child column,
// a kernel computes the element positions each output row gathers, and one
// Take of the child builds the result. Kernels so work on whole columns
// (one gather per batch), never on per-row arrays.

// MapOf returns MAP<key, value>, Spark's map type: keys are never NULL.
func MapOf(key, value arrow.DataType) arrow.DataType { return arrow.MapOf(key, value) }

// MapValue is the canonical Go value of a MAP: parallel keys and values in
// the map's order.
type MapValue struct {
	Keys, Values []any
}

// listView is a list (or map) column taken apart: row i's elements are
// values[offs[i]:offs[i+1]] (offsets include the array's slice offset).
type listView struct {
	arr    arrow.Array
	offs   []int32
	values arrow.Array
}

// viewList takes apart a *array.List or *array.Map; ok is false for other
// arrays.
func viewList(a arrow.Array) (listView, bool) {
	var l *array.List
	switch x := a.(type) {
	case *array.List:
		l = x
	case *array.Map:
		l = x.List
	default:
		return listView{}, false
	}
	n := l.Len()
	off := l.Data().Offset()
	offs := l.Offsets()
	if len(offs) < off+n+1 {
		// An empty array may have no offsets buffer.
		offs = make([]int32, n+1)
		return listView{arr: a, offs: offs, values: l.ListValues()}, true
	}
	return listView{arr: a, offs: offs[off : off+n+1], values: l.ListValues()}, true
}

func (v listView) valid(i int) bool { return v.arr.IsValid(i) }

func (v listView) size(i int) int { return int(v.offs[i+1] - v.offs[i]) }

// listOut accumulates a list result: per output row an offset, the child
// positions it gathers (-1: a NULL element) and a validity.
type listOut struct {
	offs  []int32
	idx   []int32
	valid []bool
	nulls int
}

func newListOut(n int) *listOut {
	return &listOut{offs: make([]int32, 1, n+1), valid: make([]bool, 0, n)}
}

// endRow closes the current row: valid false makes it a NULL list.
func (o *listOut) endRow(valid bool) {
	if !valid {
		o.nulls++
	}
	o.valid = append(o.valid, valid)
	o.offs = append(o.offs, int32(len(o.idx)))
}

// nullRow adds a NULL list row.
func (o *listOut) nullRow() { o.endRow(false) }

// build makes the list array of type dt whose elements are child gathered
// at o.idx.
func (o *listOut) build(mem memory.Allocator, dt arrow.DataType, child arrow.Array) (arrow.Array, error) {
	elems, err := Take(mem, child, o.idx)
	if err != nil {
		return nil, err
	}
	defer elems.Release()
	return buildList(mem, dt, o.offs, o.valid, o.nulls, elems), nil
}

// buildContext is build gathering the elements cancelCheckRows at a time
// with ctx checked between (takeContext): a batch's lists may hold up to
// 1<<30 elements.
func (o *listOut) buildContext(ctx context.Context, mem memory.Allocator, dt arrow.DataType, child arrow.Array) (arrow.Array, error) {
	elems, err := takeContext(ctx, mem, child, o.idx)
	if err != nil {
		return nil, err
	}
	defer elems.Release()
	return buildList(mem, dt, o.offs, o.valid, o.nulls, elems), nil
}

// buildList assembles a list (or map) array from offsets, row validity and
// its child elements (retained by the result).
func buildList(mem memory.Allocator, dt arrow.DataType, offs []int32, valid []bool, nulls int, elems arrow.Array) arrow.Array {
	n := len(offs) - 1
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize(len(offs) * 4)
	copy(arrow.Int32Traits.CastFromBytes(offBuf.Bytes()), offs)
	var vb *memory.Buffer
	if nulls > 0 {
		vb = boolsBitmap(mem, valid)
	}
	return fnNewArray(dt, n, []*memory.Buffer{vb, offBuf}, []arrow.ArrayData{elems.Data()}, nulls)
}

// boolsBitmap packs valid into a bitmap buffer.
func boolsBitmap(mem memory.Allocator, valid []bool) *memory.Buffer {
	vb := memory.NewResizableBuffer(mem)
	vb.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bits := vb.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	for i, ok := range valid {
		if ok {
			bitutil.SetBit(bits, i)
		}
	}
	return vb
}

// concatArrays concatenates arrays of one type into a new array.
func concatArrays(mem memory.Allocator, arrs []arrow.Array) (arrow.Array, error) {
	if len(arrs) == 1 {
		arrs[0].Retain()
		return arrs[0], nil
	}
	out, err := array.Concatenate(arrs, mem)
	if err != nil {
		return nil, fmt.Errorf("vector: concatenate %s columns: %w", TypeName(arrs[0].DataType()), err)
	}
	return out, nil
}

// plainArray decodes a dictionary array into a plain one (retained as is
// otherwise), so that nested kernels see one physical layout.
func plainArray(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	d, ok := a.(*array.Dictionary)
	if !ok {
		a.Retain()
		return a, nil
	}
	idx := make([]int32, d.Len())
	for i := range idx {
		if d.IsNull(i) {
			idx[i] = -1
		} else {
			idx[i] = int32(d.GetValueIndex(i))
		}
	}
	return Take(mem, d.Dictionary(), idx)
}

// ElemType is the element type of an ARRAY type, or nil.
func ElemType(dt arrow.DataType) arrow.DataType {
	if l, ok := dt.(*arrow.ListType); ok {
		return l.Elem()
	}
	return nil
}

// IsArrayType reports whether dt is an ARRAY (an Arrow list, not a map).
func IsArrayType(dt arrow.DataType) bool { return dt != nil && dt.ID() == arrow.LIST }

// IsMapType reports whether dt is a MAP.
func IsMapType(dt arrow.DataType) bool { return dt != nil && dt.ID() == arrow.MAP }

func isNestedID(id arrow.Type) bool {
	return id == arrow.LIST || id == arrow.MAP || id == arrow.STRUCT
}
