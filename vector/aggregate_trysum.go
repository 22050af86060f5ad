package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// try_sum, as Spark's TrySum over integral and floating-point values: the
// sum of the non-null values (bigint or double), NULL over no values, and
// NULL (not an error) once a bigint running sum overflows. The partial
// state is the sum so far (NULL after an overflow) and whether a value was
// seen; merging adds the sums, and an overflowed side or an overflowing
// addition makes the merged sum NULL, as Spark's merge does.
type trySumAcc struct {
	float bool // double sums; bigint otherwise
	merge bool
	ints  []int64
	flts  []float64
	set   []bool // a non-null value was seen
	over  []bool // the bigint sum overflowed
}

func (s *trySumAcc) resize(n int) { s.grow(nil, n) }

func (s *trySumAcc) grow(g *grower, n int) {
	s.ints = growZeroWith(g, s.ints, n)
	s.flts = growZeroWith(g, s.flts, n)
	s.set = growZeroWith(g, s.set, n)
	s.over = growZeroWith(g, s.over, n)
}

func (s *trySumAcc) heapBytes() int64 {
	return sliceBytes(s.ints) + sliceBytes(s.flts) + sliceBytes(s.set) + sliceBytes(s.over)
}

func (s *trySumAcc) resultType() arrow.DataType {
	if s.float {
		return Float64
	}
	return Int64
}

func (s *trySumAcc) stateTypes() []arrow.DataType {
	return []arrow.DataType{s.resultType(), Boolean}
}

// addInt adds v to group g's bigint sum, noting an overflow.
func (s *trySumAcc) addInt(g int32, v int64) {
	if s.over[g] {
		return
	}
	sum := s.ints[g] + v
	// Overflow: both operands of one sign, the sum of the other.
	if (s.ints[g] >= 0) == (v >= 0) && (sum >= 0) != (v >= 0) {
		s.over[g] = true
		return
	}
	s.ints[g] = sum
}

func tryAddInts[T int8 | int16 | int32 | int64](s *trySumAcc, gids []int32, vals []T, bm []byte, off int) {
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		s.set[g] = true
		s.addInt(g, int64(vals[i]))
	}
}

func (s *trySumAcc) update(gids []int32, args []arrow.Array) error {
	a := args[0]
	bm, off := validity(a)
	if s.merge {
		return s.mergeState(gids, a, args[1])
	}
	switch x := a.(type) {
	case *array.Int64:
		tryAddInts(s, gids, x.Int64Values(), bm, off)
	case *array.Int32:
		tryAddInts(s, gids, x.Int32Values(), bm, off)
	case *array.Int16:
		tryAddInts(s, gids, x.Int16Values(), bm, off)
	case *array.Int8:
		tryAddInts(s, gids, x.Int8Values(), bm, off)
	case *array.Float64:
		vals := x.Float64Values()
		for i, g := range gids {
			if bm == nil || bitSet(bm, off+i) {
				s.set[g] = true
				s.flts[g] += vals[i]
			}
		}
	case *array.Null:
	default:
		return fmt.Errorf("vector: try_sum of %s: %w", TypeName(a.DataType()), ErrType)
	}
	return nil
}

// mergeState folds partial state: sums (NULL: overflowed) and set flags.
func (s *trySumAcc) mergeState(gids []int32, sums, sets arrow.Array) error {
	setv, ok := sets.(*array.Boolean)
	if !ok {
		return fmt.Errorf("vector: try_sum state of %s: %w", TypeName(sets.DataType()), ErrType)
	}
	bm, off := validity(sums)
	for i, g := range gids {
		if !setv.Value(i) {
			continue
		}
		s.set[g] = true
		if bm != nil && !bitSet(bm, off+i) {
			s.over[g] = true
			continue
		}
		switch x := sums.(type) {
		case *array.Int64:
			s.addInt(g, x.Value(i))
		case *array.Float64:
			s.flts[g] += x.Value(i)
		default:
			return fmt.Errorf("vector: try_sum state of %s: %w", TypeName(sums.DataType()), ErrType)
		}
	}
	return nil
}

// sums returns the sums of groups gids (nil: lo..hi), NULL where nothing
// was seen (final) or where the sum overflowed.
func (s *trySumAcc) sums(mem memory.Allocator, gids []int32, lo, hi int, final bool) arrow.Array {
	n := hi - lo
	if gids != nil {
		n = len(gids)
	}
	valid := make([]bool, n)
	ints := make([]int64, n)
	flts := make([]float64, n)
	for i := 0; i < n; i++ {
		g := lo + i
		if gids != nil {
			g = int(gids[i])
		}
		valid[i] = !s.over[g] && (s.set[g] || !final)
		ints[i], flts[i] = s.ints[g], s.flts[g]
	}
	if s.float {
		return newFixedArray(mem, Float64, flts, valid)
	}
	return newFixedArray(mem, Int64, ints, valid)
}

func (s *trySumAcc) sets(mem memory.Allocator, gids []int32, lo, hi int) arrow.Array {
	if gids != nil {
		return newBoolArray(mem, gatherOf(s.set, gids), nil)
	}
	return newBoolArray(mem, s.set[lo:hi], nil)
}

func (s *trySumAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return s.sums(mem, nil, lo, hi, true), nil
}

func (s *trySumAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{s.sums(mem, nil, lo, hi, false), s.sets(mem, nil, lo, hi)}, nil
}

func (s *trySumAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{s.sums(mem, gids, 0, 0, false), s.sets(mem, gids, 0, 0)}, nil
}

func (s *trySumAcc) reset(gids []int32) {
	for _, g := range gids {
		s.ints[g], s.flts[g], s.set[g], s.over[g] = 0, 0, false, false
	}
}

// bindTrySum binds try_sum over an argument (or its partial sum) of type
// t: integral and floating-point values; decimals and intervals are not
// supported.
func bindTrySum(t arrow.DataType) (*trySumAcc, error) {
	switch {
	case IsIntegral(t) || t.ID() == arrow.NULL:
		return &trySumAcc{}, nil
	case t.ID() == arrow.FLOAT64 || t.ID() == arrow.FLOAT32:
		return &trySumAcc{float: true}, nil
	}
	return nil, fmt.Errorf("try_sum of %s is not supported (integral and floating-point values are): %w", TypeName(t), ErrType)
}
