package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// eval computes the call's column over the sorted data.
func (c *boundWindowCall) eval(ctx context.Context, mem memory.Allocator, data arrow.Record, b *winBounds, spec WindowOpSpec) (arrow.Array, error) {
	n := b.n
	switch c.call.Func {
	case WinRowNumber, WinRank, WinDenseRank, WinNtile:
		out, err := zeroedContext[int32](ctx, n)
		if err != nil {
			return nil, err
		}
		var r int32 // dense_rank's rank, carried along the partition
		err = b.eachChunk(ctx, func(s, e, lo, hi int32) {
			switch c.call.Func {
			case WinRowNumber:
				for i := lo; i < hi; i++ {
					out[i] = i - s + 1
				}
			case WinRank:
				for i := lo; i < hi; i++ {
					out[i] = b.peerLo[i] - s + 1
				}
			case WinDenseRank:
				if lo == s {
					r = 0
				}
				for i := lo; i < hi; i++ {
					if b.peerLo[i] == i {
						r++
					}
					out[i] = r
				}
			case WinNtile:
				ntile(out[lo:hi], int64(lo-s), int64(e-s), c.call.N)
			}
		})
		if err != nil {
			return nil, err
		}
		return fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Int32, out, nil)
	case WinPercentRank, WinCumeDist:
		out, err := zeroedContext[float64](ctx, n)
		if err != nil {
			return nil, err
		}
		err = b.eachChunk(ctx, func(s, e, lo, hi int32) {
			rows := float64(e - s)
			for i := lo; i < hi; i++ {
				if c.call.Func == WinCumeDist {
					out[i] = float64(b.peerHi[i]-s) / rows
				} else if e-s > 1 {
					out[i] = float64(b.peerLo[i]-s) / (rows - 1)
				}
			}
		})
		if err != nil {
			return nil, err
		}
		return fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Float64, out, nil)
	case WinLag, WinLead:
		return c.offsetValue(ctx, mem, data, b)
	case WinNthValue:
		vals, err := evalAllContext(ctx, mem, c.args, data)
		if err != nil {
			return nil, err
		}
		defer releaseArrays(vals)
		lo, hi, err := b.frame(ctx, c.call.Frame)
		if err != nil {
			return nil, err
		}
		idx, err := frameIndex(ctx, vals[0], lo, hi, c.call.N, false, c.call.IgnoreNulls)
		if err != nil {
			return nil, err
		}
		return takeContext(ctx, mem, vals[0], idx)
	}
	return c.aggregate(ctx, mem, data, b)
}

// ntile numbers the rows of a partition of rows rows into buckets 1..k
// (the first rows%k buckets hold one row more than the others); out holds
// the partition's rows from its row first on.
func ntile(out []int32, first, rows, k int64) {
	q, r := rows/k, rows%k
	big := r * (q + 1) // rows in the larger buckets
	for i := range out {
		x := first + int64(i)
		if x < big {
			out[i] = int32(x/(q+1) + 1)
		} else {
			out[i] = int32(r + (x-big)/q + 1)
		}
	}
}

// offsetValue is lag and lead: the value N rows before or after in the
// partition (counting non-null values only with IgnoreNulls), else the
// default.
func (c *boundWindowCall) offsetValue(ctx context.Context, mem memory.Allocator, data arrow.Record, b *winBounds) (arrow.Array, error) {
	vals, err := evalAllContext(ctx, mem, c.args, data)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(vals)
	v := vals[0]
	n := b.n
	shift := c.call.N
	if c.call.Func == WinLag {
		shift = -shift
	}
	idx, err := zeroedContext[int32](ctx, n)
	if err != nil {
		return nil, err
	}
	if !c.call.IgnoreNulls || shift == 0 {
		err := b.eachChunk(ctx, func(s32, e32, lo, hi int32) {
			s, e := int64(s32), int64(e32)
			for i := int64(lo); i < int64(hi); i++ {
				if j := i + shift; j >= s && j < e {
					idx[i] = int32(j)
				} else {
					idx[i] = -1
				}
			}
		})
		if err != nil {
			return nil, err
		}
	} else if err := ignoreNullsOffsets(ctx, v, b, shift, idx); err != nil {
		return nil, err
	}
	if len(vals) == 1 {
		return takeContext(ctx, mem, v, idx)
	}
	both, err := concatColumnContext(ctx, mem, v.DataType(), []arrow.Array{v, vals[1]}, 2*n)
	if err != nil {
		return nil, err
	}
	defer both.Release()
	err = eachRange(ctx, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if idx[i] < 0 {
				idx[i] = int32(n + i)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return takeContext(ctx, mem, both, idx)
}

// ignoreNullsOffsets fills idx for lag and lead with IGNORE NULLS: the row
// of the value shift non-null values away in the row's partition, or -1.
// Two passes over the whole column (the count of non-null rows before
// each row, and the non-null rows in order), then one over the rows
// finding the target from the counts: every pass is in chunks of
// cancelCheckRows rows with ctx checked between, so one partition of any
// size does not hold a cancel.
func ignoreNullsOffsets(ctx context.Context, v arrow.Array, b *winBounds, shift int64, idx []int32) error {
	cnt, err := validPrefix(ctx, v)
	if err != nil {
		return err
	}
	vpos := make([]int32, 0, int(cnt[b.n]))
	if cap(vpos) > 0 {
		err := eachRange(ctx, b.n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if cnt[i+1] != cnt[i] {
					vpos = append(vpos, int32(i))
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return b.eachChunk(ctx, func(s, e, lo, hi int32) {
		base := int64(cnt[s])
		valid := int64(cnt[e]) - base // the partition's non-null rows
		for i := lo; i < hi; i++ {
			var t int64 // the target's rank among the partition's non-null rows
			if shift < 0 {
				t = int64(cnt[i]) - base + shift
			} else {
				t = int64(cnt[i+1]) - base + shift - 1
			}
			if t >= 0 && t < valid {
				idx[i] = vpos[base+t]
			} else {
				idx[i] = -1
			}
		}
	})
}

// frameIndex returns, for each row, the row of its frame [lo, hi) that
// first/last/nth_value take: the nth (1-based) from the start, or with
// fromEnd the nth from the end; counting non-null values only with
// ignoreNulls; -1 when there is none.
func frameIndex(ctx context.Context, v arrow.Array, lo, hi []int32, nth int64, fromEnd, ignoreNulls bool) ([]int32, error) {
	n := len(lo)
	idx, err := zeroedContext[int32](ctx, n)
	if err != nil {
		return nil, err
	}
	if !ignoreNulls || v.NullN() == 0 {
		err := eachRange(ctx, n, func(c0, c1 int) {
			for i := c0; i < c1; i++ {
				var j int64
				if fromEnd {
					j = int64(hi[i]) - nth
				} else {
					j = int64(lo[i]) + nth - 1
				}
				if j >= int64(lo[i]) && j < int64(hi[i]) {
					idx[i] = int32(j)
				} else {
					idx[i] = -1
				}
			}
		})
		return idx, err
	}
	// cnt[i] is the number of non-null rows before row i; vpos lists them.
	cnt, err := zeroedContext[int32](ctx, n+1)
	if err != nil {
		return nil, err
	}
	vpos, err := makeContext[int32](ctx, 0, n)
	if err != nil {
		return nil, err
	}
	err = eachRange(ctx, n, func(c0, c1 int) {
		for i := c0; i < c1; i++ {
			cnt[i] = int32(len(vpos))
			if v.IsValid(i) {
				vpos = append(vpos, int32(i))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	cnt[n] = int32(len(vpos))
	err = eachRange(ctx, n, func(c0, c1 int) {
		for i := c0; i < c1; i++ {
			a, z := int64(cnt[lo[i]]), int64(cnt[hi[i]])
			var t int64
			if fromEnd {
				t = z - nth
			} else {
				t = a + nth - 1
			}
			if t >= a && t < z {
				idx[i] = vpos[t]
			} else {
				idx[i] = -1
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// errWindowKernel wraps a kernel's failure with the call.
func (c *boundWindowCall) wrap(err error) error {
	return fmt.Errorf("vector: window function %s: %w", c.call, err)
}
