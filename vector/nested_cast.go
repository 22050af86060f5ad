package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Casts of ARRAY, MAP and STRUCT values: element- or field-wise to another
// nested type of the same shape (each child column cast once, with the
// cast's ANSI mode), and to STRING in Spark's display form: [1, 2, null],
// {a -> 1, b -> null}, {1, x, null}.

// nestedCastKernel is the kernel of a cast from or to a nested type, or nil.
func nestedCastKernel(from, to arrow.DataType) castKernel {
	if to.ID() == arrow.STRING {
		switch from.ID() {
		case arrow.LIST, arrow.MAP, arrow.STRUCT:
			if nestedCastKernel2String(from) {
				return nestedToString
			}
		}
		return nil
	}
	switch {
	case from.ID() == arrow.LIST && to.ID() == arrow.LIST:
		if childCastOK(from.(*arrow.ListType).Elem(), to.(*arrow.ListType).Elem()) {
			return castListElems
		}
	case from.ID() == arrow.MAP && to.ID() == arrow.MAP:
		fm, tm := from.(*arrow.MapType), to.(*arrow.MapType)
		if childCastOK(fm.KeyType(), tm.KeyType()) && childCastOK(fm.ItemType(), tm.ItemType()) {
			return castMapEntries
		}
	case from.ID() == arrow.STRUCT && to.ID() == arrow.STRUCT:
		fs, ts := from.(*arrow.StructType), to.(*arrow.StructType)
		if fs.NumFields() != ts.NumFields() {
			return nil
		}
		for i := range fs.Fields() {
			if !childCastOK(fs.Field(i).Type, ts.Field(i).Type) {
				return nil
			}
		}
		return castStructFields
	}
	return nil
}

func nestedCastKernel2String(from arrow.DataType) bool {
	switch t := from.(type) {
	case *arrow.ListType:
		return childCastOK(t.Elem(), String)
	case *arrow.MapType:
		return childCastOK(t.KeyType(), String) && childCastOK(t.ItemType(), String)
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !childCastOK(f.Type, String) {
				return false
			}
		}
		return true
	}
	return false
}

// childCastOK reports whether a child of type from casts to to.
func childCastOK(from, to arrow.DataType) bool {
	from = Unwrap(from)
	return from.ID() == arrow.NULL || arrow.TypeEqual(from, to) || castTarget(to) && castKernelFor(from, to) != nil
}

// castChild casts a child column with c's mode and zone.
func (c *castEval) castChild(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	from := Unwrap(arr.DataType())
	if from.ID() == arrow.NULL {
		return array.MakeArrayOfNull(c.mem, to, arr.Len()), nil
	}
	if arrow.TypeEqual(from, to) {
		return plainArray(c.mem, arr)
	}
	k := castKernelFor(from, to)
	if k == nil {
		return nil, fmt.Errorf("cannot cast %s to %s: %w", TypeName(from), TypeName(to), ErrType)
	}
	sub := *c
	sub.from, sub.to, sub.kern = arr.DataType(), to, k
	return sub.apply(arr)
}

// childSlice is a child column's elements of a list array (its whole
// child data, which the list's offsets index).
func listChild(a arrow.Array) arrow.Array {
	return array.MakeFromData(a.Data().Children()[0])
}

func castListElems(c *castEval, arr arrow.Array) (arrow.Array, error) {
	child := listChild(arr)
	defer child.Release()
	cast, err := c.castChild(child, c.to.(*arrow.ListType).Elem())
	if err != nil {
		return nil, err
	}
	defer cast.Release()
	return withChildren(c.to, arr, []arrow.ArrayData{cast.Data()}), nil
}

func castMapEntries(c *castEval, arr arrow.Array) (arrow.Array, error) {
	tm := c.to.(*arrow.MapType)
	entries := arr.Data().Children()[0]
	keys := array.MakeFromData(entries.Children()[0])
	defer keys.Release()
	vals := array.MakeFromData(entries.Children()[1])
	defer vals.Release()
	ck, err := c.castChild(keys, tm.KeyType())
	if err != nil {
		return nil, err
	}
	defer ck.Release()
	if ck.NullN() > 0 {
		return nil, fmt.Errorf("[NULL_MAP_KEY] Cannot use null as map key: %w", ErrInvalidInput)
	}
	cv, err := c.castChild(vals, tm.ItemType())
	if err != nil {
		return nil, err
	}
	defer cv.Release()
	ed := array.NewData(tm.Elem(), entries.Len(), entries.Buffers(), []arrow.ArrayData{ck.Data(), cv.Data()}, 0, entries.Offset())
	defer ed.Release()
	return withChildren(c.to, arr, []arrow.ArrayData{ed}), nil
}

func castStructFields(c *castEval, arr arrow.Array) (arrow.Array, error) {
	ts := c.to.(*arrow.StructType)
	d := arr.Data()
	children := make([]arrow.ArrayData, len(d.Children()))
	var made []arrow.Array
	defer func() { releaseArrays(made) }()
	for i, cd := range d.Children() {
		f := array.MakeFromData(cd)
		cast, err := c.castChild(f, ts.Field(i).Type)
		f.Release()
		if err != nil {
			return nil, err
		}
		made = append(made, cast)
		children[i] = cast.Data()
	}
	return withChildren(c.to, arr, children), nil
}

// withChildren is arr with type dt and new children, sharing arr's own
// buffers (validity, offsets).
func withChildren(dt arrow.DataType, arr arrow.Array, children []arrow.ArrayData) arrow.Array {
	d := arr.Data()
	nd := array.NewData(dt, d.Len(), d.Buffers(), children, arr.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd)
}

// nestedToString renders each value as Spark's CAST(x AS STRING).
func nestedToString(c *castEval, arr arrow.Array) (arrow.Array, error) {
	r, err := newNestedRenderer(c, arr)
	if err != nil {
		return nil, err
	}
	defer r.release()
	b := array.NewStringBuilder(c.mem)
	defer b.Release()
	var buf []byte
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = r.render(buf[:0], i)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// nestedRenderer renders rows of a nested column whose leaf columns are
// cast to strings once, as whole columns.
type nestedRenderer struct {
	arr      arrow.Array
	strs     *array.String     // a leaf's strings
	children []*nestedRenderer // list: [elem]; map: [key, value]; struct: fields
	owned    []arrow.Array
}

func newNestedRenderer(c *castEval, arr arrow.Array) (*nestedRenderer, error) {
	r := &nestedRenderer{arr: arr}
	var kids []arrow.Array
	switch arr.DataType().ID() {
	case arrow.LIST:
		kids = []arrow.Array{listChild(arr)}
	case arrow.MAP:
		m := arr.(*array.Map)
		m.Keys().Retain()
		m.Items().Retain()
		kids = []arrow.Array{m.Keys(), m.Items()}
	case arrow.STRUCT:
		st := arr.(*array.Struct)
		for i := 0; i < st.NumField(); i++ {
			st.Field(i).Retain()
			kids = append(kids, st.Field(i))
		}
	default:
		s, err := c.castChild(arr, String)
		if err != nil {
			return nil, err
		}
		r.owned = append(r.owned, s)
		r.strs = s.(*array.String)
		return r, nil
	}
	r.owned = append(r.owned, kids...)
	for _, k := range kids {
		kr, err := newNestedRenderer(c, k)
		if err != nil {
			r.release()
			return nil, err
		}
		r.children = append(r.children, kr)
	}
	return r, nil
}

func (r *nestedRenderer) release() {
	for _, k := range r.children {
		k.release()
	}
	releaseArrays(r.owned)
	r.owned, r.children = nil, nil
}

// render appends row i (valid) to dst.
func (r *nestedRenderer) render(dst []byte, i int) []byte {
	if r.strs != nil {
		return append(dst, r.strs.Value(i)...)
	}
	elem := func(k *nestedRenderer, j int) []byte {
		if k.arr.IsNull(j) {
			return append(dst, "null"...)
		}
		return k.render(dst, j)
	}
	switch a := r.arr.(type) {
	case *array.Map:
		start, end := a.ValueOffsets(i)
		dst = append(dst, '{')
		for j := int(start); j < int(end); j++ {
			if j > int(start) {
				dst = append(dst, ", "...)
			}
			dst = elem(r.children[0], j)
			dst = append(dst, " -> "...)
			dst = elem(r.children[1], j)
		}
		return append(dst, '}')
	case *array.List:
		start, end := a.ValueOffsets(i)
		dst = append(dst, '[')
		for j := int(start); j < int(end); j++ {
			if j > int(start) {
				dst = append(dst, ", "...)
			}
			dst = elem(r.children[0], j)
		}
		return append(dst, ']')
	case *array.Struct:
		dst = append(dst, '{')
		for k := range r.children {
			if k > 0 {
				dst = append(dst, ", "...)
			}
			dst = elem(r.children[k], i)
		}
		return append(dst, '}')
	}
	return dst
}

// castNestedTarget reports whether dt is a nested type Cast can produce.
func castNestedTarget(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.ListType:
		return castTarget(t.Elem()) || t.Elem().ID() == arrow.NULL
	case *arrow.MapType:
		return castTarget(t.KeyType()) && (castTarget(t.ItemType()) || t.ItemType().ID() == arrow.NULL)
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !castTarget(f.Type) && f.Type.ID() != arrow.NULL {
				return false
			}
		}
		return true
	}
	return false
}
