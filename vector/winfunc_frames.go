package vector

import (
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

// frame returns each row's frame [lo[i], hi[i]) (hi == lo: empty).
func (b *winBounds) frame(f WindowFrame) (lo, hi []int32) {
	lo, hi = make([]int32, b.n), make([]int32, b.n)
	ranged := f.Range && (f.Start.Kind == FramePreceding || f.Start.Kind == FrameFollowing ||
		f.End.Kind == FramePreceding || f.End.Kind == FrameFollowing)
	var ints []int64
	var floats []float64
	var valid []bool
	if ranged {
		ints, floats, valid = b.rangeKeys()
	}
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := int(b.parts[p]), int(b.parts[p+1])
		switch {
		case ranged:
			b.rangeFrame(f, s, e, ints, floats, valid, lo, hi)
		default:
			for i := s; i < e; i++ {
				lo[i] = int32(b.rowBound(f, f.Start, i, s, e, false))
				hi[i] = int32(b.rowBound(f, f.End, i, s, e, true))
			}
		}
		for i := s; i < e; i++ {
			if hi[i] < lo[i] {
				hi[i] = lo[i]
			}
		}
	}
	return lo, hi
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
func (b *winBounds) rangeKeys() ([]int64, []float64, []bool) {
	k := b.orderKey
	n := k.Len()
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = k.IsValid(i)
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
	return ints, floats, valid
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

// rangeFrame fills the frames of partition [s, e) for a RANGE frame with
// offsets. Null keys form one group (first or last): a null row's offset
// bounds are that group, and offsets from non-null rows never reach it.
func (b *winBounds) rangeFrame(f WindowFrame, s, e int, ints []int64, floats []float64, valid []bool, lo, hi []int32) {
	vs, ve := s, e // the non-null rows
	for vs < ve && !valid[vs] {
		vs++
	}
	for ve > vs && !valid[ve-1] {
		ve--
	}
	// less(j, t, off, strict): key(j) < key(t)+off (<= with strict).
	before := func(j, t int, fb FrameBound, strict bool) bool {
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
	bound := func(fb FrameBound, end bool) {
		offset := fb.Kind == FramePreceding || fb.Kind == FrameFollowing
		out := lo
		if end {
			out = hi
		}
		p := vs
		for i := s; i < e; i++ {
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
				for p < ve && before(p, i, fb, end) {
					p++
				}
				out[i] = int32(p)
			}
		}
	}
	bound(f.Start, false)
	bound(f.End, true)
}
