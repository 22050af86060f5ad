package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The bitwise aggregates bit_and, bit_or and bit_xor over integral
// values, as Spark's BitAndAgg, BitOrAgg and BitXorAgg: the result has the
// argument's type, NULLs are skipped, NULL over no values. The values are
// kept sign-extended to 64 bits per group (the operations commute with
// sign extension, so narrowing the result back is exact); the partial
// state is the value so far, of the argument's type (NULL while empty).

// bitOp is the bitwise operation of an aggregate.
type bitOp int

const (
	bitAnd bitOp = iota
	bitOr
	bitXor
)

var bitFuncs = map[AggFunc]bitOp{AggBitAnd: bitAnd, AggBitOr: bitOr, AggBitXor: bitXor}

// bitAcc is bit_and, bit_or or bit_xor: the value and whether one was seen,
// by group.
type bitAcc struct {
	op   bitOp
	dt   arrow.DataType // the argument's (and result's) type
	vals []int64
	set  []bool
}

func (b *bitAcc) resize(n int) { b.grow(nil, n) }

func (b *bitAcc) grow(g *grower, n int) {
	b.vals = growZeroWith(g, b.vals, n)
	b.set = growZeroWith(g, b.set, n)
}

func (b *bitAcc) heapBytes() int64 { return sliceBytes(b.vals) + sliceBytes(b.set) }

func (b *bitAcc) stateTypes() []arrow.DataType { return []arrow.DataType{b.dt} }

// update folds values (input rows, or partial state: the same operation).
func (b *bitAcc) update(gids []int32, args []arrow.Array) error {
	a := args[0]
	bm, off := validity(a)
	switch x := a.(type) {
	case *array.Int64:
		foldBits(b, gids, x.Int64Values(), bm, off)
	case *array.Int32:
		foldBits(b, gids, x.Int32Values(), bm, off)
	case *array.Int16:
		foldBits(b, gids, x.Int16Values(), bm, off)
	case *array.Int8:
		foldBits(b, gids, x.Int8Values(), bm, off)
	case *array.Null:
	default:
		return fmt.Errorf("vector: bitwise aggregate of %s: %w", TypeName(a.DataType()), ErrType)
	}
	return nil
}

// foldBits is the typed loop of update, one per operation.
func foldBits[T int8 | int16 | int32 | int64](b *bitAcc, gids []int32, vals []T, bm []byte, off int) {
	vs, set := b.vals, b.set
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		v := int64(vals[i])
		if !set[g] {
			vs[g], set[g] = v, true
			continue
		}
		switch b.op {
		case bitAnd:
			vs[g] &= v
		case bitOr:
			vs[g] |= v
		default:
			vs[g] ^= v
		}
	}
}

// values returns groups' values of the argument's type, NULL where empty.
func (b *bitAcc) values(mem memory.Allocator, vals []int64, set []bool) arrow.Array {
	switch b.dt.ID() {
	case arrow.INT8:
		return newFixedArray(mem, b.dt, narrowBits[int8](vals), set)
	case arrow.INT16:
		return newFixedArray(mem, b.dt, narrowBits[int16](vals), set)
	case arrow.INT32:
		return newFixedArray(mem, b.dt, narrowBits[int32](vals), set)
	}
	return newFixedArray(mem, b.dt, vals, set)
}

func narrowBits[T int8 | int16 | int32](vals []int64) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return out
}

func (b *bitAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return b.values(mem, b.vals[lo:hi], b.set[lo:hi]), nil
}

func (b *bitAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{b.values(mem, b.vals[lo:hi], b.set[lo:hi])}, nil
}

func (b *bitAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{b.values(mem, gatherOf(b.vals, gids), gatherOf(b.set, gids))}, nil
}

func (b *bitAcc) reset(gids []int32) {
	for _, g := range gids {
		b.vals[g], b.set[g] = 0, false
	}
}

// bindBitAggregate binds bit_and/bit_or/bit_xor over an argument (or its
// partial state) of type t.
func bindBitAggregate(f AggFunc, t arrow.DataType) (*bitAcc, error) {
	if !IsIntegral(t) {
		return nil, fmt.Errorf("function %s requires an integral argument, not %s: %w", f, TypeName(t), ErrType)
	}
	return &bitAcc{op: bitFuncs[f], dt: t}, nil
}
