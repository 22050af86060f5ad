package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// What LiveAggregate needs of an accumulator beyond a batch aggregation:
// the partial state of any set of groups (not only a range), and emptying
// groups so that their ids can be taken again.

// liveAccumulator is an accumulator that a LiveAggregate can keep.
type liveAccumulator interface {
	accumulator
	// stateAt returns the partial state columns of the groups gids, in
	// that order; rows are the row counts by group id.
	stateAt(mem memory.Allocator, gids []int32, rows []int64) ([]arrow.Array, error)
	// reset makes the groups gids empty, as resize makes new groups.
	reset(gids []int32)
}

// gatherOf returns src[g] for every g of gids.
func gatherOf[T any](src []T, gids []int32) []T {
	out := make([]T, len(gids))
	for i, g := range gids {
		out[i] = src[g]
	}
	return out
}

func (c *nullCounter) resetGroups(gids []int32) {
	if c.nulls == nil {
		return
	}
	for _, g := range gids {
		c.nulls[g] = 0
	}
}

// countArray returns the count of non-null rows of each group of gids
// (counts[g] when merging states) as an Int64 array, written straight
// into its Arrow buffer: no Go slice is filled and copied.
func (c *nullCounter) countArray(mem memory.Allocator, merge bool, counts []int64, gids []int32, rows []int64) arrow.Array {
	if merge {
		return gatherFixedArray(mem, Int64, counts, gids, nil)
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(gids) * 8)
	if dst := castSlice[int64](buf.Bytes()); dst != nil {
		dst = dst[:len(gids)]
		if c.nulls == nil {
			for i, g := range gids {
				dst[i] = rows[g]
			}
		} else {
			for i, g := range gids {
				dst[i] = rows[g] - c.nulls[g]
			}
		}
	}
	return fixedArrayOf(mem, Int64, len(gids), buf, nil)
}

func (c *countAcc) stateAt(mem memory.Allocator, gids []int32, rows []int64) ([]arrow.Array, error) {
	return []arrow.Array{c.countArray(mem, c.merge, c.countsOr(rows), gids, rows)}, nil
}

func (c *countAcc) reset(gids []int32) {
	c.resetGroups(gids)
	if c.merge && !c.byRows {
		for _, g := range gids {
			c.counts[g] = 0
		}
	}
}

func (s *sumAcc) stateAt(mem memory.Allocator, gids []int32, rows []int64) ([]arrow.Array, error) {
	var sums arrow.Array
	switch s.kind {
	case sumInt:
		sums = gatherFixedArray(mem, s.resType, s.ints, gids, nil)
	case sumDecimal:
		sums = gatherFixedArray(mem, s.resType, s.decs, gids, nil)
	default:
		sums = gatherFixedArray(mem, Float64, s.floats, gids, nil)
	}
	return []arrow.Array{sums, s.countArray(mem, s.merge, s.countsOr(rows), gids, rows)}, nil
}

func (s *sumAcc) reset(gids []int32) {
	s.resetGroups(gids)
	for _, g := range gids {
		switch s.kind {
		case sumInt:
			s.ints[g] = 0
		case sumFloat:
			s.floats[g] = 0
		case sumDecimal:
			s.decs[g] = decimal128.Num{}
		}
		if s.merge && !s.byRows {
			s.counts[g] = 0
		}
	}
}

func (m *minMaxAcc) stateAt(mem memory.Allocator, gids []int32, rows []int64) ([]arrow.Array, error) {
	valid := m.fin.validOf(len(gids))
	for i, g := range gids {
		valid[i] = m.valid(int(g), rows) > 0
	}
	var a arrow.Array
	switch {
	case m.narrow != nil && m.narrow.ID() == arrow.INT8:
		return []arrow.Array{newFixedArray(mem, m.narrow, narrowSlice[int32, int8](gatherOf(m.i32, gids)), valid)}, nil
	case m.narrow != nil && m.narrow.ID() == arrow.INT16:
		return []arrow.Array{newFixedArray(mem, m.narrow, narrowSlice[int32, int16](gatherOf(m.i32, gids)), valid)}, nil
	case m.narrow != nil && m.narrow.ID() == arrow.FLOAT32:
		return []arrow.Array{newFixedArray(mem, m.narrow, narrowSlice[float64, float32](gatherOf(m.f64, gids)), valid)}, nil
	}
	switch m.kind {
	case valInt64:
		a = gatherFixedArray(mem, m.dt, m.i64, gids, valid)
	case valInt32:
		a = gatherFixedArray(mem, m.dt, m.i32, gids, valid)
	case valBool:
		vals := make([]bool, len(gids))
		for i, g := range gids {
			vals[i] = m.i32[g] != 0
		}
		a = newBoolArray(mem, vals, valid)
	case valFloat64:
		a = gatherFixedArray(mem, m.dt, m.f64, gids, valid)
	case valDecimal:
		a = gatherFixedArray(mem, m.dt, m.decs, gids, valid)
	default:
		a = newBytesArray(mem, m.dt, gatherOf(m.strs, gids), valid)
	}
	return []arrow.Array{a}, nil
}

func (m *minMaxAcc) reset(gids []int32) {
	m.resetGroups(gids)
	for _, g := range gids {
		switch m.kind {
		case valInt64:
			m.i64[g] = pick(m.isMax, int64(math.MinInt64), math.MaxInt64)
		case valInt32, valBool:
			m.i32[g] = pick(m.isMax, int32(math.MinInt32), math.MaxInt32)
		case valFloat64:
			m.f64[g] = pick(m.isMax, math.Inf(-1), math.NaN())
		case valDecimal:
			m.decs[g] = pick(m.isMax, decimal128.New(math.MinInt64, 0), decimal128.New(math.MaxInt64, math.MaxUint64))
		case valBytes:
			m.strBytes -= int64(len(m.strs[g]))
			m.strs[g], m.has[g] = "", false
		}
	}
}

func (f *firstLastAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	valid := make([]bool, len(gids))
	for i, g := range gids {
		valid[i] = f.set[g] && !f.null[g]
	}
	var v arrow.Array
	switch x := f.vals.(type) {
	case *fixedValues[int64]:
		v = gatherFixedArray(mem, x.dt, x.vals, gids, valid)
	case *fixedValues[int32]:
		v = gatherFixedArray(mem, x.dt, x.vals, gids, valid)
	case *fixedValues[float64]:
		v = gatherFixedArray(mem, x.dt, x.vals, gids, valid)
	case *fixedValues[decimal128.Num]:
		v = gatherFixedArray(mem, x.dt, x.vals, gids, valid)
	case *boolValues:
		v = newBoolArray(mem, gatherOf(x.vals, gids), valid)
	case *bytesValues:
		v = newBytesArray(mem, x.dt, gatherOf(x.vals, gids), valid)
	default:
		return nil, fmt.Errorf("vector: first/last state of %T: %w", f.vals, ErrType)
	}
	return []arrow.Array{v, newBoolArray(mem, gatherOf(f.set, gids), nil)}, nil
}

func (f *firstLastAcc) reset(gids []int32) {
	for _, g := range gids {
		f.set[g], f.null[g] = false, false
	}
	if b, ok := f.vals.(*bytesValues); ok {
		for _, g := range gids {
			b.bytes -= int64(len(b.vals[g]))
			b.vals[g] = "" // let the string go
		}
	}
}

func (h *hllAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	b := array.NewBinaryBuilder(mem, Binary.(*arrow.BinaryType))
	defer b.Release()
	b.ReserveData(len(gids) * h.m)
	b.Reserve(len(gids))
	for _, g := range gids {
		b.Append(h.regs[int(g)*h.m : int(g+1)*h.m])
	}
	return []arrow.Array{b.NewArray()}, nil
}

func (h *hllAcc) reset(gids []int32) {
	for _, g := range gids {
		clear(h.regs[int(g)*h.m : int(g+1)*h.m])
	}
}
