package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// sequence(start, stop[, step]) over integers (step 1 or -1 by default),
// dates (a day by default, or a day-time interval step of whole days) and
// timestamps (an interval step).

func typeSequence(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	st, sp := Unwrap(args[0].DataType()), Unwrap(args[1].DataType())
	var step arrow.DataType
	if len(args) == 3 {
		step = Unwrap(args[2].DataType())
	}
	switch {
	case IsIntegral(st) && IsIntegral(sp):
		t := st
		if numericRank(sp) > numericRank(st) {
			t = sp
		}
		if step != nil && !IsIntegral(step) && step.ID() != arrow.NULL {
			break
		}
		return ListOf(t), kernSequence, nil
	case st.ID() == arrow.DATE32 && sp.ID() == arrow.DATE32, st.ID() == arrow.TIMESTAMP && arrow.TypeEqual(st, sp):
		if step != nil && step.ID() != arrow.DURATION && step.ID() != arrow.NULL {
			break
		}
		if step == nil && st.ID() == arrow.TIMESTAMP {
			break
		}
		return ListOf(st), kernSequence, nil
	}
	return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.SEQUENCE_WRONG_INPUT_TYPES] sequence uses the wrong parameter types %s, %s: the start and stop must be integers, dates or timestamps, the step an integer or an interval: %w", TypeName(st), TypeName(sp), ErrType)
}

// kernSequence builds a batch's sequences. A batch of 64K rows of 100
// elements each is 6.5M elements, and one row may have up to 1<<30: it
// checks ctx every cancelCheckRows elements (or rows) built.
func kernSequence(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	elem := e.dt.(*arrow.ListType).Elem()
	for _, a := range arrs {
		if a.DataType().ID() == arrow.NULL {
			return nullList(e, n), nil
		}
	}
	read := func(a arrow.Array) func(int) int64 {
		switch x := a.(type) {
		case *array.Date32:
			return func(i int) int64 { return int64(x.Value(i)) }
		case *array.Timestamp:
			return func(i int) int64 { return int64(x.Value(i)) }
		case *array.Duration:
			return func(i int) int64 { return int64(x.Value(i)) }
		}
		return intReader(a)
	}
	starts, stops := read(arrs[0]), read(arrs[1])
	var steps func(int) int64
	if len(arrs) == 3 {
		steps = read(arrs[2])
	}
	isDate := elem.ID() == arrow.DATE32
	var vals []int64
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	work := 0 // elements and rows built since the last check of ctx
	for r := 0; r < n; r++ {
		if work++; work >= cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			work = 0
		}
		if arrs[0].IsNull(r) || arrs[1].IsNull(r) || steps != nil && arrs[2].IsNull(r) {
			nulls++
			offs = append(offs, offs[r])
			continue
		}
		valid[r] = true
		start, stop := starts(r), stops(r)
		step := int64(1)
		if stop < start {
			step = -1
		}
		if steps != nil {
			step = steps(r)
			if isDate {
				if step%86400_000_000 != 0 {
					return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE] sequence of dates needs a step of whole days, not %s: %w", FormatInterval(step), ErrInvalidInput))
				}
				step /= 86400_000_000
			}
		}
		if step == 0 && start != stop || step > 0 && start > stop || step < 0 && start < stop {
			return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE] Illegal sequence boundaries: %d to %d by %d: %w", start, stop, step, ErrInvalidInput))
		}
		var count uint64 = 1
		if step != 0 {
			count = uint64((stop-start)/step) + 1
		}
		if count > maxArrayLength || uint64(len(vals))+count > 1<<30 {
			return nil, e.rowErr(r, fmt.Errorf("[COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER] Can't create array with %d elements which exceeding the array size limit %d: %w", count, maxArrayLength, ErrInvalidInput))
		}
		v := start
		for k := uint64(0); k < count; {
			end := min(count, k+uint64(cancelCheckRows-work))
			work += int(end - k)
			for ; k < end; k++ {
				vals = append(vals, v)
				v += step
			}
			if work >= cancelCheckRows {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				work = 0
			}
		}
		offs = append(offs, int32(len(vals)))
	}
	child, err := int64sAs(e.mem, elem, vals)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	return buildList(e.mem, e.dt, offs, valid, nulls, child), nil
}

// int64sAs builds a column of integer-like type dt from int64 values.
func int64sAs(mem memory.Allocator, dt arrow.DataType, vals []int64) (arrow.Array, error) {
	switch dt.ID() {
	case arrow.INT8:
		return fixedFrom[int8](mem, dt, vals), nil
	case arrow.INT16:
		return fixedFrom[int16](mem, dt, vals), nil
	case arrow.INT32, arrow.DATE32:
		return fixedFrom[int32](mem, dt, vals), nil
	case arrow.INT64, arrow.TIMESTAMP:
		return fixedFrom[int64](mem, dt, vals), nil
	}
	return nil, fmt.Errorf("vector: integer column of %s: %w", TypeName(dt), ErrType)
}

func fixedFrom[T int8 | int16 | int32 | int64](mem memory.Allocator, dt arrow.DataType, vals []int64) arrow.Array {
	buf, out := fnFixedBuf[T](mem, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return fnNewArray(dt, len(vals), []*memory.Buffer{nil, buf}, nil, 0)
}
