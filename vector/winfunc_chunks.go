package vector

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The window operator's passes (the gather into partition order, the
// boundaries, the frames and the functions) each walk every row once. Over
// one partition of tens of millions of rows a pass takes long enough to
// hold a cancelled query, so each works in chunks of at most
// cancelCheckRows rows and checks the context between them.

// eachChunk calls fn for the rows of every partition in order, a partition
// [s, e) in pieces [lo, hi) of at most cancelCheckRows rows, and checks ctx
// once at least cancelCheckRows rows have been handed out since the last
// check (so small partitions cost no check each). A pass that carries state
// along a partition resets it when lo == s.
func (b *winBounds) eachChunk(ctx context.Context, fn func(s, e, lo, hi int32)) error {
	budget := cancelCheckRows
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := b.parts[p], b.parts[p+1]
		for lo := s; lo < e; {
			if budget <= 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				budget = cancelCheckRows
			}
			hi := min(e, lo+cancelCheckRows)
			fn(s, e, lo, hi)
			budget -= int(hi - lo)
			lo = hi
		}
	}
	return nil
}

// eachRange calls fn for [0, n) in pieces of at most cancelCheckRows rows,
// checking ctx between them.
func eachRange(ctx context.Context, n int, fn func(lo, hi int)) error {
	for lo := 0; lo < n; lo += cancelCheckRows {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		fn(lo, min(n, lo+cancelCheckRows))
	}
	return nil
}

// gatherRowsContext is gatherRows checking ctx every cancelCheckRows rows:
// fixed-width columns are gathered straight into their output buffers a
// chunk at a time; other types are gathered a chunk at a time and the
// pieces concatenated (with checks too).
func gatherRowsContext(ctx context.Context, mem memory.Allocator, rec arrow.Record, idx []int32) (arrow.Record, error) {
	if len(idx) <= cancelCheckRows {
		return gatherRows(mem, rec, idx)
	}
	return mapColumns(rec, len(idx), func(c arrow.Array) (arrow.Array, error) {
		return gatherContext(ctx, mem, c, idx)
	})
}

func gatherContext(ctx context.Context, mem memory.Allocator, arr arrow.Array, sel []int32) (arrow.Array, error) {
	d := arr.Data().(*array.Data)
	var data *array.Data
	var err error
	switch d.DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		data, err = gatherFixedContext[uint8](ctx, mem, arr, d, sel)
	case arrow.INT16, arrow.UINT16:
		data, err = gatherFixedContext[uint16](ctx, mem, arr, d, sel)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		data, err = gatherFixedContext[uint32](ctx, mem, arr, d, sel)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		data, err = gatherFixedContext[uint64](ctx, mem, arr, d, sel)
	case arrow.DECIMAL128:
		data, err = gatherFixedContext[[16]byte](ctx, mem, arr, d, sel)
	default:
		return gatherPiecesContext(ctx, mem, arr, sel)
	}
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// gatherFixedContext is gatherFixed a chunk at a time. cancelCheckRows is a
// multiple of 8, so every chunk's validity starts on a byte of the output
// bitmap.
func gatherFixedContext[T uint8 | uint16 | uint32 | uint64 | [16]byte](ctx context.Context, mem memory.Allocator, arr arrow.Array, d *array.Data, sel []int32) (*array.Data, error) {
	n := len(sel)
	var validity *memory.Buffer
	var vbits []byte
	if arr.NullN() > 0 {
		validity = memory.NewResizableBuffer(mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		vbits = validity.Bytes()
	}
	var zero T
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(n * int(sizeOf(zero)))
	out := castSlice[T](vals.Bytes())[:n]
	in := castSlice[T](bufferBytes(d, 1))[d.Offset():][:d.Len()]
	valid := 0
	err := eachRange(ctx, n, func(lo, hi int) {
		if vbits != nil {
			valid += gatherBits(vbits[lo>>3:], arr.NullBitmapBytes(), int32(d.Offset()), sel[lo:hi])
		}
		gatherValues(out[lo:hi], in, sel[lo:hi])
	})
	if err != nil {
		vals.Release()
		if validity != nil {
			validity.Release()
		}
		return nil, err
	}
	nulls := 0
	if validity != nil {
		nulls = n - valid
		if nulls == 0 {
			validity.Release()
			validity = nil
		}
	}
	data := array.NewData(d.DataType(), n, []*memory.Buffer{validity, vals}, nil, nulls, 0)
	if validity != nil {
		validity.Release()
	}
	vals.Release()
	return data, nil
}

// gatherBits writes the validity bits of rows sel (of a bitmap in at bit
// offset off) to out from its first bit, and returns how many are set.
func gatherBits(out, in []byte, off int32, sel []int32) int {
	n := len(sel)
	full := n &^ 7
	valid := 0
	for o := 0; o < full; o += 8 {
		s := (*[8]int32)(sel[o : o+8])
		var b byte
		for k, i := range s {
			p := off + i
			b |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[o>>3] = b
		valid += bits.OnesCount8(b)
	}
	if full < n {
		var b byte
		for k, i := range sel[full:] {
			p := off + i
			b |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[full>>3] = b
		valid += bits.OnesCount8(b)
	}
	return valid
}

// gatherPiecesContext gathers the types without a chunked kernel (strings,
// booleans, nested types) a chunk at a time and concatenates the pieces.
func gatherPiecesContext(ctx context.Context, mem memory.Allocator, arr arrow.Array, sel []int32) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	var gerr error
	err := eachRange(ctx, len(sel), func(lo, hi int) {
		if gerr != nil {
			return
		}
		p, err := gather(mem, arr, sel[lo:hi])
		if err != nil {
			gerr = err
			return
		}
		parts = append(parts, p)
	})
	if err == nil {
		err = gerr
	}
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	return concatColumnContext(ctx, mem, arr.DataType(), parts, len(sel))
}

// fixedArrayContext copies a window function's result v (valid: nil when
// every row is valid) into a new column of type dt (INT, BIGINT or DOUBLE),
// cancelCheckRows rows at a time with ctx checks: a column of a 20M-row
// partition is 80–160 MB. The builder's own bulk append does each chunk.
func fixedArrayContext[T int32 | int64 | float64](ctx context.Context, mem memory.Allocator, dt arrow.DataType, v []T, valid []bool) (arrow.Array, error) {
	bld, ok := array.NewBuilder(mem, dt).(interface {
		array.Builder
		AppendValues([]T, []bool)
	})
	if !ok {
		return nil, fmt.Errorf("vector: window result of %s from %T values", TypeName(dt), v)
	}
	defer bld.Release()
	bld.Reserve(len(v))
	err := eachRange(ctx, len(v), func(lo, hi int) {
		if valid == nil {
			bld.AppendValues(v[lo:hi], nil)
		} else {
			bld.AppendValues(v[lo:hi], valid[lo:hi])
		}
	})
	if err != nil {
		return nil, err
	}
	return bld.NewArray(), nil
}
