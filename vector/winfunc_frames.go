package vector

import (
	"context"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// rangeKeyKind reports how a RANGE frame with offsets compares order keys
// of type dt: as int64 (false) or float64 (true); ok is false for types it
// cannot offset.
func rangeKeyKind(dt arrow.DataType) (float, ok bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return false, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return true, true
	case arrow.DECIMAL128:
		// Up to 18 digits the unscaled values are int64s, and the
		// offset (FrameBound.Offset) counts units of the key's scale.
		return false, dt.(*arrow.Decimal128Type).Precision <= 18
	}
	return false, false
}

// frame returns each row's frame [lo[i], hi[i]) (hi == lo: empty),
// checking ctx every cancelCheckRows rows.
func (b *winBounds) frame(ctx context.Context, f WindowFrame) (lo, hi []int32, err error) {
	if lo, err = zeroedContext[int32](ctx, b.n); err != nil {
		return nil, nil, err
	}
	if hi, err = zeroedContext[int32](ctx, b.n); err != nil {
		return nil, nil, err
	}
	ranged := f.Range && (f.Start.Kind == FramePreceding || f.Start.Kind == FrameFollowing ||
		f.End.Kind == FramePreceding || f.End.Kind == FrameFollowing)
	if ranged {
		ints, floats, valid, err := b.rangeKeys(ctx)
		if err != nil {
			return nil, nil, err
		}
		// A bound's scan position carries along a partition; the frames of
		// a partition are filled bound by bound.
		var p, vs, ve int
		for _, end := range []bool{false, true} {
			fb := f.Start
			if end {
				fb = f.End
			}
			err := b.eachChunk(ctx, func(s, e, c0, c1 int32) {
				if c0 == s {
					vs, ve = nonNullRows(int(s), int(e), valid)
					p = vs
				}
				p = b.rangeFrame(f, fb, end, int(s), int(e), int(c0), int(c1), p, vs, ve, ints, floats, valid, lo, hi)
			})
			if err != nil {
				return nil, nil, err
			}
		}
	} else {
		err := b.eachChunk(ctx, func(s, e, c0, c1 int32) {
			for i := int(c0); i < int(c1); i++ {
				lo[i] = int32(b.rowBound(f, f.Start, i, int(s), int(e), false))
				hi[i] = int32(b.rowBound(f, f.End, i, int(s), int(e), true))
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	err = eachRange(ctx, b.n, func(c0, c1 int) {
		for i := c0; i < c1; i++ {
			if hi[i] < lo[i] {
				hi[i] = lo[i]
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
}

// rowBound is a bound of a ROWS frame (or a RANGE frame without offsets)
// for row i of partition [s, e): the first row of the frame (end false) or
// one past its last (end true).
func (b *winBounds) rowBound(f WindowFrame, fb FrameBound, i, s, e int, end bool) int {
	add := 0
	if end {
		add = 1
	}
	switch fb.Kind {
	case FrameUnboundedPreceding:
		return s
	case FrameUnboundedFollowing:
		return e
	case FrameCurrentRow:
		if f.Range {
			if end {
				return int(b.peerHi[i])
			}
			return int(b.peerLo[i])
		}
		return i + add
	case FramePreceding:
		return int(max(int64(s), int64(i)-fb.Offset+int64(add)))
	}
	return int(min(int64(e), int64(i)+fb.Offset+int64(add)))
}

// rangeKeys converts the order key to ascending int64 or float64 values
// (negated for a descending key) with their validity, cancelCheckRows rows
// at a time with ctx checked between (a key of one 20M-row partition is
// three passes over 20M rows).
func (b *winBounds) rangeKeys(ctx context.Context) ([]int64, []float64, []bool, error) {
	k := b.orderKey
	n := k.Len()
	valid, err := zeroedContext[bool](ctx, n)
	if err != nil {
		return nil, nil, nil, err
	}
	noNulls := k.NullN() == 0
	err = eachRange(ctx, n, func(lo, hi int) {
		if noNulls {
			for i := lo; i < hi; i++ {
				valid[i] = true
			}
			return
		}
		for i := lo; i < hi; i++ {
			valid[i] = k.IsValid(i)
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	desc := b.desc
	var ints []int64
	var floats []float64
	switch a := k.(type) {
	case *array.Int8:
		ints, err = rangeInts(ctx, a.Int8Values(), desc)
	case *array.Int16:
		ints, err = rangeInts(ctx, a.Int16Values(), desc)
	case *array.Int32:
		ints, err = rangeInts(ctx, a.Int32Values(), desc)
	case *array.Int64:
		ints, err = rangeInts(ctx, a.Int64Values(), desc)
	case *array.Date32:
		ints, err = rangeInts(ctx, a.Date32Values(), desc)
	case *array.Timestamp:
		ints, err = rangeInts(ctx, a.TimestampValues(), desc)
	case *array.Decimal128:
		ints, err = rangeDecimals(ctx, a, desc)
	case *array.Float32:
		floats, err = rangeFloats(ctx, a.Float32Values(), desc)
	case *array.Float64:
		floats, err = rangeFloats(ctx, a.Float64Values(), desc)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return ints, floats, valid, nil
}

// rangeInts widens integer keys to int64, negated with desc, checking ctx
// every cancelCheckRows rows.
func rangeInts[T ~int8 | ~int16 | ~int32 | ~int64](ctx context.Context, v []T, desc bool) ([]int64, error) {
	out, err := zeroedContext[int64](ctx, len(v))
	if err != nil {
		return nil, err
	}
	sign := int64(1)
	if desc {
		sign = -1
	}
	err = eachRange(ctx, len(v), func(lo, hi int) {
		for i, x := range v[lo:hi] {
			out[lo+i] = int64(x) * sign
		}
	})
	return out, err
}

// rangeDecimals reads DECIMAL keys of at most 18 digits as their unscaled
// int64 values, negated with desc, checking ctx every cancelCheckRows rows.
func rangeDecimals(ctx context.Context, a *array.Decimal128, desc bool) ([]int64, error) {
	out, err := zeroedContext[int64](ctx, a.Len())
	if err != nil {
		return nil, err
	}
	sign := int64(1)
	if desc {
		sign = -1
	}
	v := a.Values()
	err = eachRange(ctx, a.Len(), func(lo, hi int) {
		for i, x := range v[lo:hi] {
			out[lo+i] = int64(x.LowBits()) * sign
		}
	})
	return out, err
}

// rangeFloats widens floating-point keys to float64, negated with desc,
// checking ctx every cancelCheckRows rows.
func rangeFloats[T float32 | float64](ctx context.Context, v []T, desc bool) ([]float64, error) {
	out, err := zeroedContext[float64](ctx, len(v))
	if err != nil {
		return nil, err
	}
	sign := 1.0
	if desc {
		sign = -1
	}
	err = eachRange(ctx, len(v), func(lo, hi int) {
		for i, x := range v[lo:hi] {
			out[lo+i] = float64(x) * sign
		}
	})
	return out, err
}

// satAdd adds with saturation at the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// nonNullRows returns the rows [vs, ve) of partition [s, e) whose order
// key is not null (nulls sort first or last, so they are one run).
func nonNullRows(s, e int, valid []bool) (vs, ve int) {
	vs, ve = s, e
	for vs < ve && !valid[vs] {
		vs++
	}
	for ve > vs && !valid[ve-1] {
		ve--
	}
	return vs, ve
}

// rangeFrame fills bound fb (the frames' ends with end, else their starts)
// of rows [c0, c1) of partition [s, e) for a RANGE frame with offsets,
// scanning from row p (vs for the partition's first chunk), and returns
// where the scan stopped, for the next chunk. [vs, ve) are the partition's
// rows with a non-null key (nonNullRows). Null keys form one
// group (first or last): a null row's offset bounds are that group, and
// offsets from non-null rows never reach it.
func (b *winBounds) rangeFrame(f WindowFrame, fb FrameBound, end bool, s, e, c0, c1, p, vs, ve int, ints []int64, floats []float64, valid []bool, lo, hi []int32) int {
	// target(t) is key(t)+off, computed once per row; before(j, target,
	// strict) is key(j) < target (<= with strict).
	var shift func(int64) int64
	if fb.Months != 0 {
		shift = b.monthShift(f, fb)
	}
	target := func(t int) (int64, float64) {
		if floats != nil {
			x := floats[t]
			switch fb.Kind {
			case FramePreceding:
				x -= fb.FloatOffset
			case FrameFollowing:
				x += fb.FloatOffset
			}
			return 0, x
		}
		x := ints[t]
		switch {
		case shift != nil:
			x = shift(x)
		case fb.Kind == FramePreceding:
			x = satAdd(x, -fb.Offset)
		case fb.Kind == FrameFollowing:
			x = satAdd(x, fb.Offset)
		}
		return x, 0
	}
	before := func(j int, ti int64, tf float64, strict bool) bool {
		if floats != nil {
			if strict {
				return floats[j] <= tf
			}
			return floats[j] < tf
		}
		if strict {
			return ints[j] <= ti
		}
		return ints[j] < ti
	}
	offset := fb.Kind == FramePreceding || fb.Kind == FrameFollowing
	out := lo
	if end {
		out = hi
	}
	for i := c0; i < c1; i++ {
		switch {
		case !offset:
			out[i] = int32(b.rowBound(f, fb, i, s, e, end))
		case !valid[i]:
			// The null group: [s, vs) or [ve, e).
			g0, g1 := ve, e
			if i < vs {
				g0, g1 = s, vs
			}
			if end {
				out[i] = int32(g1)
			} else {
				out[i] = int32(g0)
			}
		default:
			ti, tf := target(i)
			for p < ve && before(p, ti, tf, end) {
				p++
			}
			out[i] = int32(p)
		}
	}
	return p
}

// monthShift returns the function that moves a RANGE key (ascending, so
// negated for a descending order: see rangeKeys) by fb's months, forward
// for FOLLOWING and back for PRECEDING in the order's direction: a DATE's
// days by addMonths, a TIMESTAMP's wall clock in f.Loc (UTC for a
// TIMESTAMP_NTZ) with its time of day kept, as Spark's key + INTERVAL
// 'y-m' YEAR TO MONTH. Keys too far out for the months to move saturate.
func (b *winBounds) monthShift(f WindowFrame, fb FrameBound) func(int64) int64 {
	months := fb.Months
	if fb.Kind == FramePreceding {
		months = -months
	}
	sign := int64(1)
	if b.desc {
		sign, months = -1, -months
	}
	dt := Unwrap(b.orderKey.DataType())
	if dt.ID() == arrow.DATE32 {
		return func(k int64) int64 { return sign * addMonths(sign*k, months) }
	}
	loc := f.Loc
	if IsTimestampNTZ(dt) {
		loc = nil
	}
	// Days past this many from the epoch would overflow microseconds.
	const maxDays = math.MaxInt64/fnMicrosPerDayMore - 1
	var z zoneCache
	return func(k int64) int64 {
		wall := sign * k
		if !isUTC(loc) {
			wall = toWall(&z, loc, wall)
		}
		days, tod := fnFloorDiv(wall, fnMicrosPerDayMore), fnFloorMod(wall, fnMicrosPerDayMore)
		nd := addMonths(days, months)
		if nd > maxDays || nd < -maxDays {
			if (nd > 0) == (sign > 0) {
				return math.MaxInt64
			}
			return math.MinInt64
		}
		wall = nd*fnMicrosPerDayMore + tod
		if !isUTC(loc) {
			wall = localToInstant(loc, wall)
		}
		return sign * wall
	}
}
