package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// eval computes the call's column over the sorted data.
func (c *boundWindowCall) eval(ctx context.Context, mem memory.Allocator, data arrow.Record, b *winBounds, spec WindowOpSpec) (arrow.Array, error) {
	n := b.n
	switch c.call.Func {
	case WinRowNumber, WinRank, WinDenseRank, WinNtile:
		out := make([]int32, n)
		for p := 0; p+1 < len(b.parts); p++ {
			s, e := b.parts[p], b.parts[p+1]
			switch c.call.Func {
			case WinRowNumber:
				for i := s; i < e; i++ {
					out[i] = i - s + 1
				}
			case WinRank:
				for i := s; i < e; i++ {
					out[i] = b.peerLo[i] - s + 1
				}
			case WinDenseRank:
				var r int32
				for i := s; i < e; i++ {
					if b.peerLo[i] == i {
						r++
					}
					out[i] = r
				}
			case WinNtile:
				ntile(out[s:e], c.call.N)
			}
		}
		return int32Array(mem, out), nil
	case WinPercentRank, WinCumeDist:
		out := make([]float64, n)
		for p := 0; p+1 < len(b.parts); p++ {
			s, e := b.parts[p], b.parts[p+1]
			rows := float64(e - s)
			for i := s; i < e; i++ {
				if c.call.Func == WinCumeDist {
					out[i] = float64(b.peerHi[i]-s) / rows
				} else if e-s > 1 {
					out[i] = float64(b.peerLo[i]-s) / (rows - 1)
				}
			}
		}
		return float64Array(mem, out), nil
	case WinLag, WinLead:
		return c.offsetValue(ctx, mem, data, b)
	case WinNthValue:
		vals, err := evalAll(ctx, c.args, data)
		if err != nil {
			return nil, err
		}
		defer releaseArrays(vals)
		lo, hi := b.frame(c.call.Frame)
		idx := frameIndex(vals[0], lo, hi, c.call.N, false, c.call.IgnoreNulls)
		return Take(mem, vals[0], idx)
	}
	return c.aggregate(ctx, mem, data, b)
}

// ntile numbers the rows of one partition into buckets 1..k: the first
// rows%k buckets hold one row more than the others.
func ntile(out []int32, k int64) {
	n := int64(len(out))
	q, r := n/k, n%k
	big := r * (q + 1) // rows in the larger buckets
	for i := range out {
		x := int64(i)
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
	vals, err := evalAll(ctx, c.args, data)
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
	idx := make([]int32, n)
	for p := 0; p+1 < len(b.parts); p++ {
		s, e := int64(b.parts[p]), int64(b.parts[p+1])
		if !c.call.IgnoreNulls || shift == 0 {
			for i := s; i < e; i++ {
				if j := i + shift; j >= s && j < e {
					idx[i] = int32(j)
				} else {
					idx[i] = -1
				}
			}
			continue
		}
		// The non-null rows of the partition, and for each row how many
		// of them come before it.
		var vpos []int32
		for i := s; i < e; i++ {
			if v.IsValid(int(i)) {
				vpos = append(vpos, int32(i))
			}
		}
		k := int64(0) // vpos[:k] are before row i
		for i := s; i < e; i++ {
			for k < int64(len(vpos)) && int64(vpos[k]) < i {
				k++
			}
			var t int64
			if shift < 0 {
				t = k + shift
			} else {
				t = k + shift - 1
				if k < int64(len(vpos)) && int64(vpos[k]) == i {
					t++
				}
			}
			if t >= 0 && t < int64(len(vpos)) {
				idx[i] = vpos[t]
			} else {
				idx[i] = -1
			}
		}
	}
	if len(vals) == 1 {
		return Take(mem, v, idx)
	}
	both, err := Concatenate([]arrow.Array{v, vals[1]}, mem)
	if err != nil {
		return nil, err
	}
	defer both.Release()
	for i, j := range idx {
		if j < 0 {
			idx[i] = int32(n + i)
		}
	}
	return Take(mem, both, idx)
}

// frameIndex returns, for each row, the row of its frame [lo, hi) that
// first/last/nth_value take: the nth (1-based) from the start, or with
// fromEnd the nth from the end; counting non-null values only with
// ignoreNulls; -1 when there is none.
func frameIndex(v arrow.Array, lo, hi []int32, nth int64, fromEnd, ignoreNulls bool) []int32 {
	n := len(lo)
	idx := make([]int32, n)
	if !ignoreNulls || v.NullN() == 0 {
		for i := range idx {
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
		return idx
	}
	// cnt[i] is the number of non-null rows before row i; vpos lists them.
	cnt := make([]int32, n+1)
	vpos := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		cnt[i] = int32(len(vpos))
		if v.IsValid(i) {
			vpos = append(vpos, int32(i))
		}
	}
	cnt[n] = int32(len(vpos))
	for i := range idx {
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
	return idx
}

func int32Array(mem memory.Allocator, v []int32) arrow.Array {
	bld := array.NewInt32Builder(mem)
	defer bld.Release()
	bld.AppendValues(v, nil)
	return bld.NewArray()
}

func float64Array(mem memory.Allocator, v []float64) arrow.Array {
	bld := array.NewFloat64Builder(mem)
	defer bld.Release()
	bld.AppendValues(v, nil)
	return bld.NewArray()
}

func int64Array(mem memory.Allocator, v []int64, valid []bool) arrow.Array {
	bld := array.NewInt64Builder(mem)
	defer bld.Release()
	bld.AppendValues(v, valid)
	return bld.NewArray()
}

// errWindowKernel wraps a kernel's failure with the call.
func (c *boundWindowCall) wrap(err error) error {
	return fmt.Errorf("vector: window function %s: %w", c.call, err)
}
