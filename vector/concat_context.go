package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ConcatRecordsContext is ConcatRecords for inputs of any size (a hash
// join's build side, a sort's buffer): it checks ctx between columns, and
// copies a column of more than cancelCheckRows rows itself
// (concatColumnContext): its buffers are made interruptibly
// (newBufferContext) and filled in chunks with ctx checked between, so
// that a cancelled query does not wait for millions of rows to be copied.
func ConcatRecordsContext(ctx context.Context, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	if len(recs) < 2 || rows <= cancelCheckRows {
		return ConcatRecords(mem, schema, recs)
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(recs))
	for c, f := range schema.Fields() {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		col, err := concatColumnContext(ctx, mem, f.Type, parts, int(rows))
		if err != nil {
			releaseArrays(cols[:c])
			return nil, fmt.Errorf("vector: concatenate column %s of %d records: %w", f.Name, len(recs), err)
		}
		cols[c] = col
	}
	out := array.NewRecord(schema, cols, rows)
	releaseArrays(cols)
	return out, nil
}

// concatColumnContext concatenates parts of type dt holding n rows in all,
// interruptibly for the types an operator's input has (fixed-width,
// boolean, strings and binaries, dictionaries, structs, lists and maps,
// and concatOtherChunked's extension, null, fixed-size list and union
// types); any other type (list views, run-end encoded) goes through
// Concatenate after a ctx check.
func concatColumnContext(ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (arrow.Array, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	if chunkedConcatType(dt) {
		return concatFixedChunked(ctx, mem, dt, parts, n)
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return concatBoolChunked(ctx, mem, dt, parts, n)
	case *arrow.StringType, *arrow.BinaryType:
		return concatBinaryChunked[int32](ctx, mem, dt, parts, n)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return concatBinaryChunked[int64](ctx, mem, dt, parts, n)
	case *arrow.DictionaryType:
		return concatDictChunked(ctx, mem, t, parts, n)
	case *arrow.StructType:
		return concatStructChunked(ctx, mem, t, parts, n)
	case *arrow.ListType, *arrow.MapType:
		return concatListChunked[int32](ctx, mem, t.(arrow.ListLikeType), parts, n)
	case *arrow.LargeListType:
		return concatListChunked[int64](ctx, mem, t, parts, n)
	}
	if out, ok, err := concatOtherChunked(ctx, mem, dt, parts, n); ok {
		return out, err
	}
	return Concatenate(parts, mem)
}

// chunkedConcatType: a type whose arrays are a validity bitmap and one
// buffer of whole-byte values (integers, floats, dates, timestamps,
// decimals, fixed-size binary).
func chunkedConcatType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DICTIONARY, arrow.EXTENSION, arrow.BOOL, arrow.NULL:
		return false
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	return ok && fw.BitWidth() > 0 && fw.BitWidth()%8 == 0
}

// concatFixedChunked concatenates parts of a chunkedConcatType holding n
// rows in all.
func concatFixedChunked(ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (arrow.Array, error) {
	width := dt.(arrow.FixedWidthDataType).BitWidth() / 8
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
	for _, p := range parts {
		d := p.Data()
		off, l := d.Offset(), d.Len()
		if l == 0 {
			continue
		}
		if len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
			return nil, fmt.Errorf("%s array without a values buffer: %w", TypeName(dt), ErrType)
		}
		src := d.Buffers()[1].Bytes()[off*width : (off+l)*width]
		for lo := 0; lo < l; lo += cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+cancelCheckRows, l)
			copy(dst[(pos+lo)*width:], src[lo*width:hi*width])
		}
		pos += l
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// bitChunkRows is how many bits a chunked bitmap copy copies between
// context checks (128 KiB of bitmap).
const bitChunkRows = 1 << 20

// concatValidity returns the validity bitmap of parts (n rows in all)
// concatenated, made interruptibly and copied in chunks with ctx checks,
// and their null count; nil when no row is null.
func concatValidity(ctx context.Context, mem memory.Allocator, parts []arrow.Array, n int) (*memory.Buffer, int, error) {
	nulls := 0
	for _, p := range parts {
		nulls += p.NullN()
	}
	if nulls == 0 {
		return nil, 0, nil
	}
	validity, err := newBufferContext(ctx, mem, int(bitutil.BytesForBits(int64(n))))
	if err != nil {
		return nil, 0, err
	}
	dst := validity.Bytes()
	pos := 0
	for _, p := range parts {
		d := p.Data()
		off, l := d.Offset(), d.Len()
		for lo := 0; lo < l; lo += bitChunkRows {
			if err := ctx.Err(); err != nil {
				validity.Release()
				return nil, 0, err
			}
			hi := min(lo+bitChunkRows, l)
			switch bm := d.Buffers(); {
			case p.NullN() > 0 && len(bm) > 0 && bm[0] != nil:
				bitutil.CopyBitmap(bm[0].Bytes(), off+lo, hi-lo, dst, pos+lo)
			case p.NullN() == l:
				bitutil.SetBitsTo(dst, int64(pos+lo), int64(hi-lo), false)
			default:
				bitutil.SetBitsTo(dst, int64(pos+lo), int64(hi-lo), true)
			}
		}
		pos += l
	}
	return validity, nulls, nil
}

// concatBoolChunked concatenates boolean parts holding n rows in all: the
// values are a bitmap, copied as the validity is.
func concatBoolChunked(ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (arrow.Array, error) {
	values, err := newBufferContext(ctx, mem, int(bitutil.BytesForBits(int64(n))))
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
	for _, p := range parts {
		d := p.Data()
		off, l := d.Offset(), d.Len()
		if l == 0 {
			continue
		}
		if len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
			return nil, fmt.Errorf("%s array without a values buffer: %w", TypeName(dt), ErrType)
		}
		src := d.Buffers()[1].Bytes()
		for lo := 0; lo < l; lo += bitChunkRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+bitChunkRows, l)
			bitutil.CopyBitmap(src, off+lo, hi-lo, dst, pos+lo)
		}
		pos += l
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
