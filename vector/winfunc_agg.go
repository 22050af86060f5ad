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
	args, err := evalAll(ctx, c.agg.args, data)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(args)
	// min and max take their values from the input (frameExtreme): the
	// accumulators behind partitionAggregate widen narrow types (TINYINT,
	// SMALLINT, FLOAT), which the plan types as the argument's.
	if f.wholePartition() && !(a.Func == AggFirst || a.Func == AggLast || a.Func == AggMin || a.Func == AggMax) {
		return c.partitionAggregate(mem, args, b)
	}
	lo, hi := b.frame(f)
	switch {
	case a.Func == AggCountStar:
		out := make([]int64, b.n)
		for i := range out {
			out[i] = int64(hi[i] - lo[i])
		}
		return int64Array(mem, out, nil), nil
	case a.Func == AggCount && len(args) == 1 && !a.Distinct:
		cnt := validPrefix(args[0])
		out := make([]int64, b.n)
		for i := range out {
			out[i] = int64(cnt[hi[i]] - cnt[lo[i]])
		}
		return int64Array(mem, out, nil), nil
	case a.Func == AggFirst || a.Func == AggLast:
		idx := frameIndex(args[0], lo, hi, 1, a.Func == AggLast, a.IgnoreNulls)
		return Take(mem, args[0], idx)
	case (a.Func == AggMin || a.Func == AggMax) && len(c.args) == 1:
		raw, err := evalAll(ctx, c.args, data)
		if err != nil {
			return nil, err
		}
		defer releaseArrays(raw)
		idx := frameExtreme(raw[0], b, lo, hi, a.Func == AggMax)
		return Take(mem, raw[0], idx)
	case (a.Func == AggSum || a.Func == AggAvg) && !a.Distinct && f.Start.Kind == FrameUnboundedPreceding:
		if out, ok, err := c.runningSum(mem, args[0], b, hi); ok || err != nil {
			return out, err
		}
	}
	return c.frameAggregate(ctx, mem, args, b, lo, hi)
}

// validPrefix returns cnt with cnt[i] the number of non-null values of v
// before row i.
func validPrefix(v arrow.Array) []int32 {
	n := v.Len()
	cnt := make([]int32, n+1)
	if v.NullN() == 0 {
		for i := range cnt {
			cnt[i] = int32(i)
		}
		return cnt
	}
	if v.NullN() == n {
		// All null (a NULL-type column has no bitmap, and IsValid reads
		// a missing bitmap as all valid).
		return cnt
	}
	for i := 0; i < n; i++ {
		cnt[i+1] = cnt[i]
		if v.IsValid(i) {
			cnt[i+1]++
		}
	}
	return cnt
}

// partitionAggregate aggregates each partition once (the frame is the
// whole partition) and gives every row its partition's value.
func (c *boundWindowCall) partitionAggregate(mem memory.Allocator, args []arrow.Array, b *winBounds) (arrow.Array, error) {
	parts := len(b.parts) - 1
	gids := make([]int32, b.n)
	rows := make([]int64, parts)
	for p := 0; p < parts; p++ {
		s, e := b.parts[p], b.parts[p+1]
		rows[p] = int64(e - s)
		for i := s; i < e; i++ {
			gids[i] = int32(p)
		}
	}
	acc := c.agg.acc
	acc.resize(parts)
	if err := acc.update(gids, args); err != nil {
		return nil, c.wrap(err)
	}
	vals, err := acc.final(mem, 0, parts, rows)
	if err != nil {
		return nil, c.wrap(err)
	}
	defer vals.Release()
	return Take(mem, vals, gids)
}

// frameAggregate folds each row's frame into its own group of the
// aggregate's accumulator, feeding the frames' rows in chunks: exact for
// every aggregate, in time proportional to the total frame size.
func (c *boundWindowCall) frameAggregate(ctx context.Context, mem memory.Allocator, args []arrow.Array, b *winBounds, lo, hi []int32) (arrow.Array, error) {
	const chunk = 1 << 16
	acc := c.agg.acc
	acc.resize(b.n)
	rows := make([]int64, b.n)
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
	out, err := acc.final(mem, 0, b.n, rows)
	if err != nil {
		return nil, c.wrap(err)
	}
	return out, nil
}

// frameExtreme returns, for each row, a row holding the largest (max) or
// smallest non-null value of its frame, or -1: a monotonic deque over the
// frames, whose bounds only move forward.
func frameExtreme(v arrow.Array, b *winBounds, lo, hi []int32, max bool) []int32 {
	cmp := newRowCmp(v, false, true)
	idx := make([]int32, b.n)
	dq := make([]int32, 0, 64)
	noNulls := v.NullN() == 0
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := b.parts[p], b.parts[p+1]
		dq = dq[:0]
		head := 0
		next := s // the next row to push
		for i := s; i < e; i++ {
			for ; next < hi[i]; next++ {
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
	}
	return idx
}

// runningSum computes sum and avg over growing frames [partition start,
// hi) of integer and floating-point values as running totals, adding the
// values in row order as Spark's running frame does (so floating-point
// results are the same). ok is false for other types.
func (c *boundWindowCall) runningSum(mem memory.Allocator, v arrow.Array, b *winBounds, hi []int32) (arrow.Array, bool, error) {
	avg := c.call.Agg.Func == AggAvg
	rt := c.field.Type.ID()
	bm, off := validity(v)
	switch x := v.(type) {
	case *array.Int64:
		return runningInts(c, mem, x.Int64Values(), bm, off, b, hi, avg, rt)
	case *array.Int32:
		return runningInts(c, mem, x.Int32Values(), bm, off, b, hi, avg, rt)
	case *array.Int16:
		return runningInts(c, mem, x.Int16Values(), bm, off, b, hi, avg, rt)
	case *array.Int8:
		return runningInts(c, mem, x.Int8Values(), bm, off, b, hi, avg, rt)
	case *array.Float64:
		return runningFloats(mem, x.Float64Values(), bm, off, b, hi, avg, rt)
	case *array.Float32:
		return runningFloats(mem, x.Float32Values(), bm, off, b, hi, avg, rt)
	}
	return nil, false, nil
}

func runningInts[T int8 | int16 | int32 | int64](c *boundWindowCall, mem memory.Allocator, v []T, bm []byte, off int, b *winBounds, hi []int32, avg bool, rt arrow.Type) (arrow.Array, bool, error) {
	if avg {
		if rt != arrow.FLOAT64 {
			return nil, false, nil
		}
		out := make([]float64, b.n)
		valid := make([]bool, b.n)
		for p := 0; p+1 < len(b.parts); p++ {
			s, e := b.parts[p], b.parts[p+1]
			var sum float64
			var cnt int64
			next := s
			for i := s; i < e; i++ {
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
		}
		return float64ArrayValid(mem, out, valid), true, nil
	}
	if rt != arrow.INT64 {
		return nil, false, nil
	}
	out := make([]int64, b.n)
	valid := make([]bool, b.n)
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := b.parts[p], b.parts[p+1]
		var sum int64
		var cnt int64
		next := s
		if bm == nil {
			for i := s; i < e; i++ {
				for ; next < hi[i]; next++ {
					x := int64(v[next])
					r := sum + x
					if (r > sum) != (x > 0) && x != 0 {
						return nil, true, c.wrap(overflowAt(c, int(next), sum, x))
					}
					sum = r
					cnt++
				}
				out[i], valid[i] = sum, cnt > 0
			}
			continue
		}
		for i := s; i < e; i++ {
			for ; next < hi[i]; next++ {
				if !bitSet(bm, off+int(next)) {
					continue
				}
				x := int64(v[next])
				r := sum + x
				if (r > sum) != (x > 0) && x != 0 {
					return nil, true, c.wrap(overflowAt(c, int(next), sum, x))
				}
				sum = r
				cnt++
			}
			out[i], valid[i] = sum, cnt > 0
		}
	}
	return int64Array(mem, out, valid), true, nil
}

func runningFloats[T float32 | float64](mem memory.Allocator, v []T, bm []byte, off int, b *winBounds, hi []int32, avg bool, rt arrow.Type) (arrow.Array, bool, error) {
	if rt != arrow.FLOAT64 {
		return nil, false, nil
	}
	out := make([]float64, b.n)
	valid := make([]bool, b.n)
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := b.parts[p], b.parts[p+1]
		var sum float64
		var cnt int64
		next := s
		for i := s; i < e; i++ {
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
	}
	return float64ArrayValid(mem, out, valid), true, nil
}

func float64ArrayValid(mem memory.Allocator, v []float64, valid []bool) arrow.Array {
	bld := array.NewFloat64Builder(mem)
	defer bld.Release()
	bld.AppendValues(v, valid)
	return bld.NewArray()
}

// overflowAt is the ANSI overflow of a running integer sum.
func overflowAt(c *boundWindowCall, row int, sum, x int64) error {
	return &EvalError{Expr: c.call.Agg.String(), Row: row, Err: ErrOverflow,
		Values: fmt.Sprintf("value=%d, running sum=%d", x, sum)}
}
