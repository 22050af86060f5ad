package vector

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// partOffsets returns the offsets of part d (l+1 of them from its offset),
// or an error naming dt when it has none.
func partOffsets[O int32 | int64](dt arrow.DataType, d arrow.ArrayData) ([]O, error) {
	if len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return nil, fmt.Errorf("%s array without offsets: %w", TypeName(dt), ErrType)
	}
	offs := castSlice[O](d.Buffers()[1].Bytes())
	if len(offs) < d.Offset()+d.Len()+1 {
		return nil, fmt.Errorf("%s array with %d offsets for %d rows: %w", TypeName(dt), len(offs), d.Offset()+d.Len(), ErrType)
	}
	return offs[d.Offset() : d.Offset()+d.Len()+1], nil
}

// newOffsetsContext makes the offsets buffer of n rows (n+1 offsets of O)
// interruptibly.
func newOffsetsContext[O int32 | int64](ctx context.Context, mem memory.Allocator, n int) (*memory.Buffer, []O, error) {
	var zero O
	buf, err := newBufferContext(ctx, mem, (n+1)*int(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, err
	}
	return buf, castSlice[O](buf.Bytes())[:n+1], nil
}

// maxOffset is the largest offset of O.
func maxOffset[O int32 | int64]() int64 {
	var zero O
	if unsafe.Sizeof(zero) == 4 {
		return math.MaxInt32
	}
	return math.MaxInt64
}

// concatBinaryChunked concatenates string or binary parts (offsets of O)
// holding n rows in all: offsets and data are made interruptibly
// (newBufferContext) and copied cancelCheckRows rows at a time, the
// offsets rebased, checking ctx between.
func concatBinaryChunked[O int32 | int64](ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (arrow.Array, error) {
	total := int64(0)
	for _, p := range parts {
		d := p.Data()
		if d.Len() == 0 {
			continue
		}
		offs, err := partOffsets[O](dt, d)
		if err != nil {
			return nil, err
		}
		total += int64(offs[len(offs)-1] - offs[0])
	}
	if total > maxOffset[O]() {
		return nil, fmt.Errorf("%s column of %d bytes is over what its offsets address (%d): %w", TypeName(dt), total, maxOffset[O](), ErrType)
	}
	offsets, dstOffs, err := newOffsetsContext[O](ctx, mem, n)
	if err != nil {
		return nil, err
	}
	defer offsets.Release()
	data, err := newBufferContext(ctx, mem, int(total))
	if err != nil {
		return nil, err
	}
	defer data.Release()
	validity, nulls, err := concatValidity(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	if validity != nil {
		defer validity.Release()
	}
	dstData := data.Bytes()
	pos, at := 0, O(0)
	for _, p := range parts {
		d := p.Data()
		l := d.Len()
		if l == 0 {
			continue
		}
		offs, _ := partOffsets[O](dt, d)
		var src []byte
		if b := d.Buffers()[2]; b != nil {
			src = b.Bytes()
		}
		for lo := 0; lo < l; lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+cancelCheckRows, l)
			shift := at - offs[lo]
			for i := lo; i < hi; i++ {
				dstOffs[pos+i] = offs[i] + shift
			}
			at += offs[hi] - offs[lo]
			copy(dstData[offs[lo]+shift:at], src[offs[lo]:offs[hi]])
		}
		pos += l
	}
	dstOffs[n] = at
	arr := array.NewData(dt, n, []*memory.Buffer{validity, offsets, data}, nil, nulls, 0)
	defer arr.Release()
	return array.MakeFromData(arr), nil
}

// concatListChunked concatenates list or map parts (offsets of O) holding
// n rows in all: the elements each part uses are concatenated
// (concatColumnContext, so interruptibly at any depth) and the offsets
// rebased in chunks with ctx checks.
func concatListChunked[O int32 | int64](ctx context.Context, mem memory.Allocator, dt arrow.ListLikeType, parts []arrow.Array, n int) (arrow.Array, error) {
	var elems []arrow.Array
	defer func() { releaseArrays(elems) }()
	total := int64(0)
	for _, p := range parts {
		d := p.Data()
		if d.Len() == 0 {
			continue
		}
		offs, err := partOffsets[O](dt, d)
		if err != nil {
			return nil, err
		}
		if len(d.Children()) != 1 {
			return nil, fmt.Errorf("%s array with %d children: %w", TypeName(dt), len(d.Children()), ErrType)
		}
		lo, hi := int64(offs[0]), int64(offs[len(offs)-1])
		child := array.MakeFromData(d.Children()[0])
		elems = append(elems, array.NewSlice(child, lo, hi))
		child.Release()
		total += hi - lo
	}
	if total > maxOffset[O]() {
		return nil, fmt.Errorf("%s column of %d elements is over what its offsets address (%d): %w", TypeName(dt), total, maxOffset[O](), ErrType)
	}
	values, err := concatColumnContext(ctx, mem, dt.Elem(), elems, int(total))
	if err != nil {
		return nil, err
	}
	defer values.Release()
	offsets, dstOffs, err := newOffsetsContext[O](ctx, mem, n)
	if err != nil {
		return nil, err
	}
	defer offsets.Release()
	validity, nulls, err := concatValidity(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	if validity != nil {
		defer validity.Release()
	}
	pos, at := 0, O(0)
	for _, p := range parts {
		d := p.Data()
		l := d.Len()
		if l == 0 {
			continue
		}
		offs, _ := partOffsets[O](dt, d)
		for lo := 0; lo < l; lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+cancelCheckRows, l)
			shift := at - offs[lo]
			for i := lo; i < hi; i++ {
				dstOffs[pos+i] = offs[i] + shift
			}
			at += offs[hi] - offs[lo]
		}
		pos += l
	}
	dstOffs[n] = at
	arr := array.NewData(dt, n, []*memory.Buffer{validity, offsets}, []arrow.ArrayData{values.Data()}, nulls, 0)
	defer arr.Release()
	return array.MakeFromData(arr), nil
}

// concatStructChunked concatenates struct parts holding n rows in all,
// field by field (concatColumnContext), with the structs' own validity.
func concatStructChunked(ctx context.Context, mem memory.Allocator, dt *arrow.StructType, parts []arrow.Array, n int) (arrow.Array, error) {
	fields := make([]arrow.ArrayData, 0, dt.NumFields())
	defer func() {
		for _, f := range fields {
			f.Release()
		}
	}()
	fieldParts := make([]arrow.Array, len(parts))
	for k, f := range dt.Fields() {
		for i, p := range parts {
			s, ok := p.(*array.Struct)
			if !ok {
				return nil, fmt.Errorf("vector: concatenating %s with a %s part: %w", TypeName(dt), TypeName(p.DataType()), ErrType)
			}
			fieldParts[i] = s.Field(k)
		}
		col, err := concatColumnContext(ctx, mem, f.Type, fieldParts, n)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		col.Data().Retain()
		fields = append(fields, col.Data())
		col.Release()
	}
	validity, nulls, err := concatValidity(ctx, mem, parts, n)
	if err != nil {
		return nil, err
	}
	if validity != nil {
		defer validity.Release()
	}
	arr := array.NewData(dt, n, []*memory.Buffer{validity}, fields, nulls, 0)
	defer arr.Release()
	return array.MakeFromData(arr), nil
}

// concatDictChunked concatenates dictionary parts holding n rows in all.
// Parts that share one dictionary have their indices concatenated
// (chunked) under it; otherwise the dictionaries are unified (a ctx check
// per part) and the indices transposed into a buffer made interruptibly,
// cancelCheckRows rows at a time.
func concatDictChunked(ctx context.Context, mem memory.Allocator, dt *arrow.DictionaryType, parts []arrow.Array, n int) (arrow.Array, error) {
	dicts := make([]*array.Dictionary, len(parts))
	indices := make([]arrow.Array, len(parts))
	for i, p := range parts {
		d, ok := p.(*array.Dictionary)
		if !ok {
			return nil, fmt.Errorf("vector: concatenating %s with a %s part: %w", TypeName(dt), TypeName(p.DataType()), ErrType)
		}
		dicts[i], indices[i] = d, d.Indices()
	}
	if !needsUnify(parts) {
		idx, err := concatColumnContext(ctx, mem, dt.IndexType, indices, n)
		if err != nil {
			return nil, err
		}
		defer idx.Release()
		return array.NewDictionaryArray(dt, idx, dicts[0].Dictionary()), nil
	}
	u, err := array.NewDictionaryUnifier(mem, dt.ValueType)
	if err != nil {
		return nil, fmt.Errorf("vector: concatenating %s: %w", TypeName(dt), err)
	}
	defer u.Release()
	maps := make([][]int32, len(parts))
	for i, d := range dicts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		buf, err := u.UnifyAndTranspose(d.Dictionary())
		if err != nil {
			return nil, fmt.Errorf("vector: unifying dictionaries: %w", err)
		}
		maps[i] = append([]int32(nil), arrow.Int32Traits.CastFromBytes(buf.Bytes())[:d.Dictionary().Len()]...)
		buf.Release()
	}
	dict, err := u.GetResultWithIndexType(dt.IndexType)
	if err != nil {
		return nil, fmt.Errorf("vector: unified dictionary: %w", err)
	}
	defer dict.Release()
	fw, ok := dt.IndexType.(arrow.FixedWidthDataType)
	if !ok {
		return nil, fmt.Errorf("vector: dictionary index type %s: %w", dt.IndexType, ErrType)
	}
	width := fw.BitWidth() / 8
	values, err := newBufferContext(ctx, mem, n*width)
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
	dst := values.Bytes()
	pos := 0
	for i, d := range dicts {
		l := d.Len()
		for lo := 0; lo < l; lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+cancelCheckRows, l)
			chunk := array.NewSlice(d, int64(lo), int64(hi)).(*array.Dictionary)
			ix, err := DictionaryIndices(chunk)
			chunk.Release()
			if err != nil {
				return nil, err
			}
			// Unified indices are not negative, so each is written as the
			// unsigned integer of the index type's width.
			switch width {
			case 1:
				transposeInto(castSlice[uint8](dst)[pos+lo:pos+hi], ix, maps[i])
			case 2:
				transposeInto(castSlice[uint16](dst)[pos+lo:pos+hi], ix, maps[i])
			case 4:
				transposeInto(castSlice[uint32](dst)[pos+lo:pos+hi], ix, maps[i])
			case 8:
				transposeInto(castSlice[uint64](dst)[pos+lo:pos+hi], ix, maps[i])
			default:
				return nil, fmt.Errorf("vector: dictionary index type %s: %w", dt.IndexType, ErrType)
			}
		}
		pos += l
	}
	idxData := array.NewData(dt.IndexType, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer idxData.Release()
	idx := array.MakeFromData(idxData)
	defer idx.Release()
	return array.NewDictionaryArray(dt, idx, dict), nil
}

// transposeInto writes m[ix[i]] to dst[i] (0 where ix[i] is -1: a null).
func transposeInto[T uint8 | uint16 | uint32 | uint64](dst []T, ix, m []int32) {
	for i, k := range ix {
		if k >= 0 {
			dst[i] = T(m[k])
		} else {
			dst[i] = 0
		}
	}
}
