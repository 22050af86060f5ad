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
	}
	return false, false
}

// frame returns each row's frame [lo[i], hi[i]) (hi == lo: empty),
// checking ctx every cancelCheckRows rows.
func (b *winBounds) frame(ctx context.Context, f WindowFrame) (lo, hi []int32, err error) {
	lo, hi = make([]int32, b.n), make([]int32, b.n)
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
// (negated for a descending key) with their validity.
func (b *winBounds) rangeKeys(ctx context.Context) ([]int64, []float64, []bool, error) {
	k := b.orderKey
	n := k.Len()
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = k.IsValid(i)
	}
	// The conversions below are one pass over the key; check before them.
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	sign := int64(1)
	if b.desc {
		sign = -1
	}
	var ints []int64
	var floats []float64
	conv := func(get func(i int) int64) {
		ints = make([]int64, n)
		for i := range ints {
			ints[i] = get(i) * sign
		}
	}
	switch a := k.(type) {
	case *array.Int8:
		conv(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int16:
		conv(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int32:
		conv(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int64:
		conv(func(i int) int64 { return a.Value(i) })
	case *array.Date32:
		conv(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Timestamp:
		conv(func(i int) int64 { return int64(a.Value(i)) })
	case *array.Float32:
		floats = make([]float64, n)
		for i := range floats {
			floats[i] = float64(a.Value(i)) * float64(sign)
		}
	case *array.Float64:
		floats = make([]float64, n)
		for i := range floats {
			floats[i] = a.Value(i) * float64(sign)
		}
	}
	return ints, floats, valid, nil
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
	// before(j, t, strict): key(j) < key(t)+off (<= with strict).
	before := func(j, t int, strict bool) bool {
		if floats != nil {
			target := floats[t]
			switch fb.Kind {
			case FramePreceding:
				target -= fb.FloatOffset
			case FrameFollowing:
				target += fb.FloatOffset
			}
			if strict {
				return floats[j] <= target
			}
			return floats[j] < target
		}
		target := ints[t]
		switch fb.Kind {
		case FramePreceding:
			target = satAdd(target, -fb.Offset)
		case FrameFollowing:
			target = satAdd(target, fb.Offset)
		}
		if strict {
			return ints[j] <= target
		}
		return ints[j] < target
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
			for p < ve && before(p, i, end) {
				p++
			}
			out[i] = int32(p)
		}
	}
	return p
}
