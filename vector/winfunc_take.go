package vector

import (
	"context"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The last steps of a window function over a large partition: the Take
// that turns its row indices into its column (lag/lead, first/last,
// nth_value, min/max, a partition's aggregate spread to its rows), and the
// accumulator's update and final values of a whole-partition or per-row
// frame aggregate. Each is one pass over every row; over a partition of
// tens of millions of rows a single call held a cancelled query for
// hundreds of milliseconds, so each works cancelCheckRows rows (or
// groups) at a time with a context check between.

// takeContext is Take (a negative index makes a null row) checking ctx
// every cancelCheckRows rows. Fixed-width columns are taken straight into
// their output buffers; other types a chunk at a time, the pieces
// concatenated with checks too.
func takeContext(ctx context.Context, mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	if len(idx) <= cancelCheckRows {
		return Take(mem, arr, idx)
	}
	neg := false
	err := eachRange(ctx, len(idx), func(lo, hi int) {
		neg = neg || hasNegative(idx[lo:hi])
	})
	if err != nil {
		return nil, err
	}
	if !neg {
		return gatherContext(ctx, mem, arr, idx)
	}
	d := arr.Data().(*array.Data)
	var data *array.Data
	switch d.DataType().ID() {
	case arrow.INT8, arrow.UINT8:
		data, err = takeFixedContext[uint8](ctx, mem, arr, d, idx)
	case arrow.INT16, arrow.UINT16:
		data, err = takeFixedContext[uint16](ctx, mem, arr, d, idx)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		data, err = takeFixedContext[uint32](ctx, mem, arr, d, idx)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP, arrow.DATE64, arrow.DURATION:
		data, err = takeFixedContext[uint64](ctx, mem, arr, d, idx)
	case arrow.DECIMAL128:
		data, err = takeFixedContext[[16]byte](ctx, mem, arr, d, idx)
	default:
		return takePiecesContext(ctx, mem, arr, idx)
	}
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// takeFixedContext is takeFixed a chunk at a time (cancelCheckRows is a
// multiple of 8, so every chunk's validity starts on a byte of the output
// bitmap). The caller has found a negative index, so the output has nulls.
func takeFixedContext[T uint8 | uint16 | uint32 | uint64 | [16]byte](ctx context.Context, mem memory.Allocator, arr arrow.Array, d *array.Data, sel []int32) (*array.Data, error) {
	n := len(sel)
	validity := memory.NewResizableBuffer(mem)
	validity.Resize(int(bitutil.BytesForBits(int64(n))))
	vbits := validity.Bytes()
	var zero T
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(n * int(sizeOf(zero)))
	out := castSlice[T](vals.Bytes())[:n]
	in := castSlice[T](bufferBytes(d, 1))[d.Offset():][:d.Len()]
	var inBits []byte
	if arr.NullN() > 0 {
		inBits = arr.NullBitmapBytes()
	}
	valid := 0
	err := eachRange(ctx, n, func(lo, hi int) {
		valid += takeBits(vbits[lo>>3:], inBits, int32(d.Offset()), sel[lo:hi])
		takeValues(out[lo:hi], in, sel[lo:hi])
	})
	if err != nil {
		vals.Release()
		validity.Release()
		return nil, err
	}
	data := array.NewData(d.DataType(), n, []*memory.Buffer{validity, vals}, nil, n-valid, 0)
	validity.Release()
	vals.Release()
	return data, nil
}

// takeValues sets out[k] to in[sel[k]], or to zero where sel[k] < 0.
func takeValues[T uint8 | uint16 | uint32 | uint64 | [16]byte](out, in []T, sel []int32) {
	var zero T
	out = out[:len(sel)]
	for k, i := range sel {
		if i >= 0 {
			out[k] = in[i]
		} else {
			out[k] = zero
		}
	}
}

// takeBits writes the validity of rows sel (of bitmap in at bit offset
// off; nil: all valid) to out from its first bit, a negative index being
// invalid, and returns how many bits are set.
func takeBits(out, in []byte, off int32, sel []int32) int {
	valid := 0
	for o := 0; o < len(sel); o += 8 {
		var b byte
		for k, i := range sel[o:min(o+8, len(sel))] {
			if i < 0 {
				continue
			}
			if in == nil {
				b |= 1 << k
				continue
			}
			p := off + i
			b |= (in[p>>3] >> (p & 7) & 1) << k
		}
		out[o>>3] = b
		valid += bits.OnesCount8(b)
	}
	return valid
}

// takePiecesContext takes the types without a chunked kernel (strings,
// booleans, nested types) a chunk at a time and concatenates the pieces.
func takePiecesContext(ctx context.Context, mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	var terr error
	err := eachRange(ctx, len(idx), func(lo, hi int) {
		if terr != nil {
			return
		}
		p, err := Take(mem, arr, idx[lo:hi])
		if err != nil {
			terr = err
			return
		}
		parts = append(parts, p)
	})
	if err == nil {
		err = terr
	}
	if err != nil {
		return nil, err
	}
	return concatColumnContext(ctx, mem, arr.DataType(), parts, len(idx))
}

// updateContext folds args into acc (row i into group gids[i])
// cancelCheckRows rows at a time, in row order (so floating-point sums add
// in the same order as one update), checking ctx between chunks.
func updateContext(ctx context.Context, acc accumulator, gids []int32, args []arrow.Array) error {
	if len(gids) <= cancelCheckRows {
		return acc.update(gids, args)
	}
	piece := make([]arrow.Array, len(args))
	for lo := 0; lo < len(gids); lo += cancelCheckRows {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		hi := min(len(gids), lo+cancelCheckRows)
		for i, a := range args {
			piece[i] = array.NewSlice(a, int64(lo), int64(hi))
		}
		err := acc.update(gids[lo:hi], piece)
		releaseArrays(piece)
		if err != nil {
			return err
		}
	}
	return nil
}

// finalContext is acc's final values of groups [0, n), cancelCheckRows
// groups at a time with ctx checked between, the pieces concatenated.
func finalContext(ctx context.Context, mem memory.Allocator, acc accumulator, n int, rows []int64) (arrow.Array, error) {
	if n <= cancelCheckRows {
		return acc.final(mem, 0, n, rows)
	}
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	for lo := 0; lo < n; lo += cancelCheckRows {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p, err := acc.final(mem, lo, min(n, lo+cancelCheckRows), rows)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return concatColumnContext(ctx, mem, parts[0].DataType(), parts, n)
}
