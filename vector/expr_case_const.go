package vector

import (
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CASE whose branches are all constants (`CASE WHEN price < 10000 THEN 1
// ELSE 0 END`, the form a `count(*) FILTER (WHERE ...)` takes in SQL that
// has no FILTER, three times per row in Nexmark q17). The general merge
// writes a branch number per row and then reads, per row, the branch's
// operand and validity through its view; here each branch's constant is
// written straight into the rows its taken bitmap selects, a word of 64
// rows at a time (a full word as one fill), and the result's validity is
// the OR of the taken bitmaps of the non-NULL branches.

// mergeConst merges the branches when every branch that took rows is a
// constant and dt is fixed-width; ok is false otherwise (the caller takes
// the general path).
func mergeConst(mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, taken [][]uint64) (_ arrow.Array, ok bool, err error) {
	for k, t := range taken {
		if t != nil && !srcs[k].konst {
			return nil, false, nil
		}
	}
	var out arrow.Array
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		out, err = mergeConstFixed[uint8](mem, dt, n, srcs, taken)
	case arrow.INT16, arrow.UINT16:
		out, err = mergeConstFixed[uint16](mem, dt, n, srcs, taken)
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		out, err = mergeConstFixed[uint32](mem, dt, n, srcs, taken)
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		out, err = mergeConstFixed[uint64](mem, dt, n, srcs, taken)
	case arrow.DECIMAL128:
		out, err = mergeConstFixed[decimal128.Num](mem, dt, n, srcs, taken)
	default:
		return nil, false, nil
	}
	return out, err == nil, err
}

// mergeConstFixed writes each constant branch into its taken rows; rows
// no branch took, and those of a NULL branch, are null (value zero).
func mergeConstFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, dt arrow.DataType, n int, srcs []caseSource, taken [][]uint64) (arrow.Array, error) {
	buf, out := newValues[T](mem, n)
	clear(out)
	vbuf, vw := newBitmap(mem, n)
	clear(vw)
	for k, t := range taken {
		if t == nil || srcs[k].v == nil {
			continue // took no row, or NULL: zero and null
		}
		c, err := rawConst[T](mem, dt, srcs[k].v)
		if err != nil {
			buf.Release()
			vbuf.Release()
			return nil, err
		}
		for w, word := range t[:len(vw)] {
			word &= wordMask(w, n)
			vw[w] |= word
			if word == ^uint64(0) {
				dst := out[w*64 : w*64+64]
				for i := range dst {
					dst[i] = c
				}
				continue
			}
			for word != 0 {
				out[w*64+bits.TrailingZeros64(word)] = c
				word &= word - 1
			}
		}
	}
	validity, nulls := finishValidity(vbuf, vw, n)
	return newArrayOwning(dt, n, buf, validity, nulls), nil
}
