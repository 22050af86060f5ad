package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// aggregate computes an aggregate over each row's frame, choosing the
// cheapest exact method for the function and frame.
func (c *boundWindowCall) aggregate(ctx context.Context, mem memory.Allocator, data arrow.Record, b *winBounds) (arrow.Array, error) {
	a := c.call.Agg
	f := c.call.Frame
	args, err := evalAllContext(ctx, mem, c.agg.args, data)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(args)
	// min and max take their values from the input (frameExtreme): the
	// accumulators behind partitionAggregate widen narrow types (TINYINT,
	// SMALLINT, FLOAT), which the plan types as the argument's.
	if f.wholePartition() && !(a.Func == AggFirst || a.Func == AggLast || a.Func == AggMin || a.Func == AggMax) {
		return c.partitionAggregate(ctx, mem, args, b)
	}
	lo, hi, err := b.frame(ctx, f)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Func == AggCountStar:
		out, err := zeroedContext[int64](ctx, b.n)
		if err != nil {
			return nil, err
		}
		err = eachRange(ctx, b.n, func(c0, c1 int) {
			for i := c0; i < c1; i++ {
				out[i] = int64(hi[i] - lo[i])
			}
		})
		if err != nil {
			return nil, err
		}
		return fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Int64, out, nil)
	case a.Func == AggCount && len(args) == 1 && !a.Distinct:
		cnt, err := validPrefix(ctx, args[0])
		if err != nil {
			return nil, err
		}
		out, err := zeroedContext[int64](ctx, b.n)
		if err != nil {
			return nil, err
		}
		err = eachRange(ctx, b.n, func(c0, c1 int) {
			for i := c0; i < c1; i++ {
				out[i] = int64(cnt[hi[i]] - cnt[lo[i]])
			}
		})
		if err != nil {
			return nil, err
		}
		return fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Int64, out, nil)
	case a.Func == AggFirst || a.Func == AggLast:
		idx, err := frameIndex(ctx, args[0], lo, hi, 1, a.Func == AggLast, a.IgnoreNulls)
		if err != nil {
			return nil, err
		}
		return takeContext(ctx, mem, args[0], idx)
	case (a.Func == AggMin || a.Func == AggMax) && len(c.args) == 1:
		raw, err := evalAllContext(ctx, mem, c.args, data)
		if err != nil {
			return nil, err
		}
		defer releaseArrays(raw)
		idx, err := frameExtreme(ctx, raw[0], b, lo, hi, a.Func == AggMax)
		if err != nil {
			return nil, err
		}
		return takeContext(ctx, mem, raw[0], idx)
	case (a.Func == AggSum || a.Func == AggAvg) && !a.Distinct && f.Start.Kind == FrameUnboundedPreceding:
		if out, ok, err := c.runningSum(ctx, mem, args[0], b, hi); ok || err != nil {
			return out, err
		}
	}
	return c.frameAggregate(ctx, mem, args, b, lo, hi)
}

// validPrefix returns cnt with cnt[i] the number of non-null values of v
// before row i.
func validPrefix(ctx context.Context, v arrow.Array) ([]int32, error) {
	n := v.Len()
	cnt, err := zeroedContext[int32](ctx, n+1)
	if err != nil {
		return nil, err
	}
	if v.NullN() == 0 {
		err := eachRange(ctx, n+1, func(c0, c1 int) {
			for i := c0; i < c1; i++ {
				cnt[i] = int32(i)
			}
		})
		return cnt, err
	}
	if v.NullN() == n {
		// All null (a NULL-type column has no bitmap, and IsValid reads
		// a missing bitmap as all valid).
		return cnt, nil
	}
	err = eachRange(ctx, n, func(c0, c1 int) {
		for i := c0; i < c1; i++ {
			cnt[i+1] = cnt[i]
			if v.IsValid(i) {
				cnt[i+1]++
			}
		}
	})
	return cnt, err
}

// partitionAggregate aggregates each partition once (the frame is the
// whole partition) and gives every row its partition's value.
func (c *boundWindowCall) partitionAggregate(ctx context.Context, mem memory.Allocator, args []arrow.Array, b *winBounds) (arrow.Array, error) {
	parts := len(b.parts) - 1
	gids, err := zeroedContext[int32](ctx, b.n)
	if err != nil {
		return nil, err
	}
	rows := make([]int64, parts)
	p := int32(-1)
	err = b.eachChunk(ctx, func(s, e, c0, c1 int32) {
		if c0 == s {
			p++
			rows[p] = int64(e - s)
		}
		for i := c0; i < c1; i++ {
			gids[i] = p
		}
	})
	if err != nil {
		return nil, err
	}
	acc := c.agg.acc
	acc.resize(parts)
	if err := updateContext(ctx, acc, gids, args); err != nil {
		return nil, c.wrap(err)
	}
	vals, err := finalContext(ctx, mem, acc, parts, rows)
	if err != nil {
		return nil, c.wrap(err)
	}
	defer vals.Release()
	return takeContext(ctx, mem, vals, gids)
}

// frameAggregate folds each row's frame into its own group of the
// aggregate's accumulator, feeding the frames' rows in chunks: exact for
// every aggregate, in time proportional to the total frame size.
func (c *boundWindowCall) frameAggregate(ctx context.Context, mem memory.Allocator, args []arrow.Array, b *winBounds, lo, hi []int32) (arrow.Array, error) {
	const chunk = 1 << 16
	acc := c.agg.acc
	acc.resize(b.n)
	rows, err := zeroedContext[int64](ctx, b.n)
	if err != nil {
		return nil, err
	}
	idx := make([]int32, 0, chunk)
	gids := make([]int32, 0, chunk)
	taken := make([]arrow.Array, len(args))
	flush := func() error {
		if len(idx) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, a := range args {
			t, err := Take(mem, a, idx)
			if err != nil {
				releaseArrays(taken[:i])
				return err
			}
			taken[i] = t
		}
		err := acc.update(gids, taken)
		releaseArrays(taken)
		idx, gids = idx[:0], gids[:0]
		if err != nil {
			return c.wrap(err)
		}
		return nil
	}
	for i := 0; i < b.n; i++ {
		if i%cancelCheckRows == cancelCheckRows-1 {
			// Rows with empty frames add nothing to flush.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rows[i] = int64(hi[i] - lo[i])
		for j := lo[i]; j < hi[i]; j++ {
			idx = append(idx, j)
			gids = append(gids, int32(i))
			if len(idx) == chunk {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	out, err := finalContext(ctx, mem, acc, b.n, rows)
	if err != nil {
		return nil, c.wrap(err)
	}
	return out, nil
}

// frameExtreme returns, for each row, a row holding the largest (max) or
// smallest non-null value of its frame, or -1: a monotonic deque over the
// frames, whose bounds only move forward. The deque carries along a
// partition from chunk to chunk.
func frameExtreme(ctx context.Context, v arrow.Array, b *winBounds, lo, hi []int32, max bool) ([]int32, error) {
	cmp := newRowCmp(v, false, true)
	idx, err := zeroedContext[int32](ctx, b.n)
	if err != nil {
		return nil, err
	}
	dq := make([]int32, 0, 64)
	noNulls := v.NullN() == 0
	var head int
	var next int32 // the next row to push
	// A chunk's first frame may reach far past the chunk (a frame to the
	// partition's end pushes every row of it), so the pushes are counted
	// and checked on their own.
	pushes := 0
	var stopped error
	err = b.eachChunk(ctx, func(s, e, c0, c1 int32) {
		if stopped != nil {
			return
		}
		if c0 == s {
			dq, head, next = dq[:0], 0, s
		}
		for i := c0; i < c1; i++ {
			for ; next < hi[i]; next++ {
				if pushes++; pushes == cancelCheckRows {
					pushes = 0
					if stopped = ctx.Err(); stopped != nil {
						return
					}
				}
				if !noNulls && v.IsNull(int(next)) {
					continue
				}
				for len(dq) > head {
					c := cmp.cmp(dq[len(dq)-1], next)
					if max && c > 0 || !max && c < 0 {
						break
					}
					dq = dq[:len(dq)-1]
				}
				dq = append(dq, next)
			}
			for head < len(dq) && dq[head] < lo[i] {
				head++
			}
			if head < len(dq) {
				idx[i] = dq[head]
			} else {
				idx[i] = -1
			}
			if head > 1024 && head*2 > len(dq) {
				dq = append(dq[:0], dq[head:]...)
				head = 0
			}
		}
	})
	if err == nil {
		err = stopped
	}
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// runningSum computes sum and avg over growing frames [partition start,
// hi) of integer and floating-point values as running totals, adding the
// values in row order as Spark's running frame does (so floating-point
// results are the same). ok is false for other types.
func (c *boundWindowCall) runningSum(ctx context.Context, mem memory.Allocator, v arrow.Array, b *winBounds, hi []int32) (arrow.Array, bool, error) {
	avg := c.call.Agg.Func == AggAvg
	rt := c.field.Type.ID()
	bm, off := validity(v)
	switch x := v.(type) {
	case *array.Int64:
		return runningInts(ctx, c, mem, x.Int64Values(), bm, off, b, hi, avg, rt)
	case *array.Int32:
		return runningInts(ctx, c, mem, x.Int32Values(), bm, off, b, hi, avg, rt)
	case *array.Int16:
		return runningInts(ctx, c, mem, x.Int16Values(), bm, off, b, hi, avg, rt)
	case *array.Int8:
		return runningInts(ctx, c, mem, x.Int8Values(), bm, off, b, hi, avg, rt)
	case *array.Float64:
		return runningFloats(ctx, mem, x.Float64Values(), bm, off, b, hi, avg, rt)
	case *array.Float32:
		return runningFloats(ctx, mem, x.Float32Values(), bm, off, b, hi, avg, rt)
	}
	return nil, false, nil
}

// runningState is a running total carried along a partition from chunk to
// chunk: the sum, the count of values, and the next row to add.
type runningState[S int64 | float64] struct {
	sum  S
	cnt  int64
	next int32
}

func runningInts[T int8 | int16 | int32 | int64](ctx context.Context, c *boundWindowCall, mem memory.Allocator, v []T, bm []byte, off int, b *winBounds, hi []int32, avg bool, rt arrow.Type) (arrow.Array, bool, error) {
	if avg {
		if rt != arrow.FLOAT64 {
			return nil, false, nil
		}
		out, err := zeroedContext[float64](ctx, b.n)
		if err != nil {
			return nil, true, err
		}
		valid, err := zeroedContext[bool](ctx, b.n)
		if err != nil {
			return nil, true, err
		}
		var st runningState[float64]
		err = b.eachChunk(ctx, func(s, e, c0, c1 int32) {
			if c0 == s {
				st = runningState[float64]{next: s}
			}
			sum, cnt, next := st.sum, st.cnt, st.next
			for i := c0; i < c1; i++ {
				for ; next < hi[i]; next++ {
					if bm == nil || bitSet(bm, off+int(next)) {
						sum += float64(v[next])
						cnt++
					}
				}
				if cnt > 0 {
					out[i], valid[i] = sum/float64(cnt), true
				}
			}
			st = runningState[float64]{sum, cnt, next}
		})
		if err != nil {
			return nil, true, err
		}
		out2, err := fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Float64, out, valid)
		return out2, true, err
	}
	if rt != arrow.INT64 {
		return nil, false, nil
	}
	out, err := zeroedContext[int64](ctx, b.n)
	if err != nil {
		return nil, true, err
	}
	valid, err := zeroedContext[bool](ctx, b.n)
	if err != nil {
		return nil, true, err
	}
	var st runningState[int64]
	var ovf error
	err = b.eachChunk(ctx, func(s, e, c0, c1 int32) {
		if ovf != nil {
			return
		}
		if c0 == s {
			st = runningState[int64]{next: s}
		}
		sum, cnt, next := st.sum, st.cnt, st.next
		defer func() { st = runningState[int64]{sum, cnt, next} }()
		if bm == nil {
			for i := c0; i < c1; i++ {
				for ; next < hi[i]; next++ {
					x := int64(v[next])
					r := sum + x
					if (r > sum) != (x > 0) && x != 0 {
						ovf = c.wrap(overflowAt(c, int(next), sum, x))
						return
					}
					sum = r
					cnt++
				}
				out[i], valid[i] = sum, cnt > 0
			}
			return
		}
		for i := c0; i < c1; i++ {
			for ; next < hi[i]; next++ {
				if !bitSet(bm, off+int(next)) {
					continue
				}
				x := int64(v[next])
				r := sum + x
				if (r > sum) != (x > 0) && x != 0 {
					ovf = c.wrap(overflowAt(c, int(next), sum, x))
					return
				}
				sum = r
				cnt++
			}
			out[i], valid[i] = sum, cnt > 0
		}
	})
	if ovf != nil {
		return nil, true, ovf
	}
	if err != nil {
		return nil, true, err
	}
	out2, err := fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Int64, out, valid)
	return out2, true, err
}

func runningFloats[T float32 | float64](ctx context.Context, mem memory.Allocator, v []T, bm []byte, off int, b *winBounds, hi []int32, avg bool, rt arrow.Type) (arrow.Array, bool, error) {
	if rt != arrow.FLOAT64 {
		return nil, false, nil
	}
	out, err := zeroedContext[float64](ctx, b.n)
	if err != nil {
		return nil, true, err
	}
	valid, err := zeroedContext[bool](ctx, b.n)
	if err != nil {
		return nil, true, err
	}
	var st runningState[float64]
	err = b.eachChunk(ctx, func(s, e, c0, c1 int32) {
		if c0 == s {
			st = runningState[float64]{next: s}
		}
		sum, cnt, next := st.sum, st.cnt, st.next
		for i := c0; i < c1; i++ {
			for ; next < hi[i]; next++ {
				if bm == nil || bitSet(bm, off+int(next)) {
					sum += float64(v[next])
					cnt++
				}
			}
			if cnt > 0 {
				valid[i] = true
				if avg {
					out[i] = sum / float64(cnt)
				} else {
					out[i] = sum
				}
			}
		}
		st = runningState[float64]{sum, cnt, next}
	})
	if err != nil {
		return nil, true, err
	}
	out2, err := fixedArrayContext(ctx, mem, arrow.PrimitiveTypes.Float64, out, valid)
	return out2, true, err
}

// overflowAt is the ANSI overflow of a running integer sum.
func overflowAt(c *boundWindowCall, row int, sum, x int64) error {
	return &EvalError{Expr: c.call.Agg.String(), Row: row, Err: ErrOverflow,
		Values: fmt.Sprintf("value=%d, running sum=%d", x, sum)}
}
