package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Chunked concatenation of the remaining column kinds: extension types
// (through their storage), null, fixed-size lists and unions. Each is
// built from the chunked copies of its parts (validity, type codes,
// offsets, children), so that no single step copies millions of rows.

// concatOtherChunked concatenates parts of an extension, null,
// fixed-size list or union type holding n rows in all; ok is false for
// any other type.
func concatOtherChunked(ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (out arrow.Array, ok bool, err error) {
	switch t := dt.(type) {
	case arrow.ExtensionType:
		out, err = concatExtensionChunked(ctx, mem, t, parts, n)
	case *arrow.NullType:
		out = array.NewNull(n)
	case *arrow.FixedSizeListType:
		out, err = concatFixedListChunked(ctx, mem, t, parts, n)
	case *arrow.SparseUnionType:
		out, err = concatSparseUnionChunked(ctx, mem, t, parts, n)
	case *arrow.DenseUnionType:
		out, err = concatDenseUnionChunked(ctx, mem, t, parts, n)
	default:
		return nil, false, nil
	}
	return out, true, err
}

// concatExtensionChunked concatenates the parts' storage arrays and wraps
// the result in the extension type.
func concatExtensionChunked(ctx context.Context, mem memory.Allocator, dt arrow.ExtensionType, parts []arrow.Array, n int) (arrow.Array, error) {
	storage := make([]arrow.Array, len(parts))
	for i, p := range parts {
		e, ok := p.(array.ExtensionArray)
		if !ok {
			return nil, fmt.Errorf("vector: concatenating %s with a %s part: %w", dt, p.DataType(), ErrType)
		}
		storage[i] = e.Storage()
	}
	s, err := concatColumnContext(ctx, mem, dt.StorageType(), storage, n)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	return array.NewExtensionArrayWithStorage(dt, s), nil
}

// concatFixedListChunked concatenates fixed-size list parts: the values
// each part uses (its slice of the child) and the lists' validity.
func concatFixedListChunked(ctx context.Context, mem memory.Allocator, dt *arrow.FixedSizeListType, parts []arrow.Array, n int) (arrow.Array, error) {
	size := int(dt.Len())
	children := make([]arrow.Array, 0, len(parts))
	defer func() { releaseArrays(children) }()
	for _, p := range parts {
		d := p.Data()
		if len(d.Children()) != 1 {
			return nil, fmt.Errorf("vector: %s array with %d children: %w", TypeName(dt), len(d.Children()), ErrType)
		}
		off, l := d.Offset(), d.Len()
		cd := array.NewSliceData(d.Children()[0], int64(off*size), int64((off+l)*size))
		children = append(children, array.MakeFromData(cd))
		cd.Release()
	}
	values, err := concatColumnContext(ctx, mem, dt.Elem(), children, n*size)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	validity, nulls, err := concatValidity(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	if validity != nil {
		defer validity.Release()
	}
	d := array.NewData(dt, n, []*memory.Buffer{validity}, []arrow.ArrayData{values.Data()}, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// concatTypeCodes copies the parts' type codes (one byte a row) into one
// buffer, cancelCheckRows rows at a time.
func concatTypeCodes(ctx context.Context, mem memory.Allocator, parts []arrow.Array, n int) (*memory.Buffer, error) {
	codes, err := newBufferContext(ctx, mem, n)
	if err != nil {
		return nil, err
	}
	dst := codes.Bytes()
	pos := 0
	for _, p := range parts {
		u, ok := p.(array.Union)
		if !ok {
			codes.Release()
			return nil, fmt.Errorf("vector: concatenating a union with a %s part: %w", TypeName(p.DataType()), ErrType)
		}
		src := u.RawTypeCodes()
		for lo := 0; lo < len(src); lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				codes.Release()
				return nil, err
			}
			for i, c := range src[lo:min(lo+cancelCheckRows, len(src))] {
				dst[pos+lo+i] = byte(c)
			}
		}
		pos += len(src)
	}
	return codes, nil
}

// concatSparseUnionChunked concatenates sparse union parts: the type codes
// and, child by child, the rows each part uses.
func concatSparseUnionChunked(ctx context.Context, mem memory.Allocator, dt *arrow.SparseUnionType, parts []arrow.Array, n int) (arrow.Array, error) {
	codes, err := concatTypeCodes(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	defer codes.Release()
	children := make([]arrow.ArrayData, 0, len(dt.Fields()))
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	childParts := make([]arrow.Array, len(parts))
	for k, f := range dt.Fields() {
		for i, p := range parts {
			d := p.Data()
			cd := array.NewSliceData(d.Children()[k], int64(d.Offset()), int64(d.Offset()+d.Len()))
			childParts[i] = array.MakeFromData(cd)
			cd.Release()
		}
		col, err := concatColumnContext(ctx, mem, f.Type, childParts, n)
		releaseArrays(childParts)
		if err != nil {
			return nil, fmt.Errorf("union member %s: %w", f.Name, err)
		}
		col.Data().Retain()
		children = append(children, col.Data())
		col.Release()
	}
	d := array.NewData(dt, n, []*memory.Buffer{nil, codes}, children, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// concatDenseUnionChunked concatenates dense union parts: the type codes,
// the children whole (part after part), and the offsets shifted by the
// child's length in the parts before.
func concatDenseUnionChunked(ctx context.Context, mem memory.Allocator, dt *arrow.DenseUnionType, parts []arrow.Array, n int) (arrow.Array, error) {
	codes, err := concatTypeCodes(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	defer codes.Release()
	offsets, offs, err := newOffsetsContext[int32](ctx, mem, n-1) // n offsets
	if err != nil {
		return nil, err
	}
	defer offsets.Release()
	offs = offs[:n]
	ids := dt.ChildIDs()
	nf := len(dt.Fields())
	base := make([]int64, nf)
	pos := 0
	for _, p := range parts {
		u := p.(*array.DenseUnion) // concatTypeCodes checked the parts
		codesOf, src := u.RawTypeCodes(), u.RawValueOffsets()
		for lo := 0; lo < len(src); lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for i := lo; i < min(lo+cancelCheckRows, len(src)); i++ {
				v := int64(src[i]) + base[ids[codesOf[i]]]
				if v > maxOffset[int32]() {
					return nil, fmt.Errorf("vector: concatenated %s of more than 2^31 values in one member: %w", TypeName(dt), ErrType)
				}
				offs[pos+i] = int32(v)
			}
		}
		pos += len(src)
		for k := range nf {
			base[k] += int64(u.Field(k).Len())
		}
	}
	children := make([]arrow.ArrayData, 0, nf)
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	childParts := make([]arrow.Array, len(parts))
	for k, f := range dt.Fields() {
		total := 0
		for i, p := range parts {
			childParts[i] = p.(*array.DenseUnion).Field(k)
			total += childParts[i].Len()
		}
		col, err := concatColumnContext(ctx, mem, f.Type, childParts, total)
		if err != nil {
			return nil, fmt.Errorf("union member %s: %w", f.Name, err)
		}
		col.Data().Retain()
		children = append(children, col.Data())
		col.Release()
	}
	d := array.NewData(dt, n, []*memory.Buffer{nil, codes, offsets}, children, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}
