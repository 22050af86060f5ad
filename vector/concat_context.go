package vector

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ConcatRecordsContext is ConcatRecords for inputs of any size (a hash
// join's build side, a sort's buffer): it checks ctx between columns, and
// copies a fixed-width column of more than cancelCheckRows rows itself in
// chunks of that many rows, checking ctx between them, so that a cancelled
// query does not wait for millions of rows to be copied.
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
		if err := ctx.Err(); err != nil {
			releaseArrays(cols[:c])
			return nil, err
		}
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		var col arrow.Array
		var err error
		switch {
		case chunkedConcatType(f.Type):
			col, err = concatFixedChunked(ctx, mem, f.Type, parts, int(rows))
		case f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY:
			col, err = concatBinaryChunked(ctx, mem, f.Type, parts, int(rows))
		default:
			col, err = Concatenate(parts, mem)
		}
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
	// The values buffer is the one large allocation: made interruptibly
	// when mem can (ContextAllocator).
	values, err := newBufferContext(ctx, mem, n*width)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	validity, nulls := concatValidity(mem, parts, n)
	if validity != nil {
		defer validity.Release()
	}
	dst := values.Bytes()
	pos := 0
	for _, p := range parts {
		d := p.Data()
		if len(d.Buffers()) < 2 || (d.Len() > 0 && d.Buffers()[1] == nil) {
			return nil, fmt.Errorf("%s array without a values buffer: %w", TypeName(dt), ErrType)
		}
		off, l := d.Offset(), d.Len()
		var src []byte
		if l > 0 {
			src = d.Buffers()[1].Bytes()[off*width : (off+l)*width]
		}
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

// concatValidity returns the validity bitmap of parts (n rows in all)
// concatenated, and their null count; nil when no row is null. At n/8
// bytes it is small beside the values.
func concatValidity(mem memory.Allocator, parts []arrow.Array, n int) (*memory.Buffer, int) {
	nulls := 0
	for _, p := range parts {
		nulls += p.NullN()
	}
	if nulls == 0 {
		return nil, 0
	}
	validity := memory.NewResizableBuffer(mem)
	validity.Resize(int(bitutil.BytesForBits(int64(n))))
	pos := 0
	for _, p := range parts {
		d := p.Data()
		off, l := d.Offset(), d.Len()
		if bm := d.Buffers()[0]; p.NullN() > 0 && bm != nil {
			bitutil.CopyBitmap(bm.Bytes(), off, l, validity.Bytes(), pos)
		} else if p.NullN() == l && l > 0 {
			bitutil.SetBitsTo(validity.Bytes(), int64(pos), int64(l), false)
		} else {
			bitutil.SetBitsTo(validity.Bytes(), int64(pos), int64(l), true)
		}
		pos += l
	}
	return validity, nulls
}

// concatBinaryChunked concatenates string or binary parts (int32
// offsets) holding n rows in all: offsets and data are made interruptibly
// (newBufferContext) and copied cancelCheckRows rows at a time, the
// offsets rebased, checking ctx between.
func concatBinaryChunked(ctx context.Context, mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, n int) (arrow.Array, error) {
	total := int64(0)
	for _, p := range parts {
		d := p.Data()
		if d.Len() == 0 {
			continue
		}
		if len(d.Buffers()) < 3 || d.Buffers()[1] == nil {
			return nil, fmt.Errorf("%s array without offsets: %w", TypeName(dt), ErrType)
		}
		offs := castSlice[int32](d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
		total += int64(offs[len(offs)-1] - offs[0])
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("%s column of %d bytes is over the 2 GiB of int32 offsets: %w", TypeName(dt), total, ErrType)
	}
	offsets, err := newBufferContext(ctx, mem, (n+1)*4)
	if err != nil {
		return nil, err
	}
	defer offsets.Release()
	data, err := newBufferContext(ctx, mem, int(total))
	if err != nil {
		return nil, err
	}
	defer data.Release()
	validity, nulls := concatValidity(mem, parts, n)
	if validity != nil {
		defer validity.Release()
	}
	dstOffs, dstData := castSlice[int32](offsets.Bytes())[:n+1], data.Bytes()
	pos, at := 0, int32(0)
	for _, p := range parts {
		d := p.Data()
		l := d.Len()
		if l == 0 {
			continue
		}
		offs := castSlice[int32](d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+l+1]
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
