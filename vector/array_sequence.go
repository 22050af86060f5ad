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
	// First the rows' bounds, steps and sizes (errors in row order), then
	// the elements written straight into the output buffer.
	first := make([]int64, n)
	step := make([]int64, n)
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	total := uint64(0)
	for r := 0; r < n; r++ {
		if r%cancelCheckRows == cancelCheckRows-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if arrs[0].IsNull(r) || arrs[1].IsNull(r) || steps != nil && arrs[2].IsNull(r) {
			nulls++
			offs = append(offs, offs[r])
			continue
		}
		valid[r] = true
		start, stop := starts(r), stops(r)
		st := int64(1)
		if stop < start {
			st = -1
		}
		if steps != nil {
			st = steps(r)
			if isDate {
				if st%86400_000_000 != 0 {
					return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE] sequence of dates needs a step of whole days, not %s: %w", FormatInterval(st), ErrInvalidInput))
				}
				st /= 86400_000_000
			}
		}
		if st == 0 && start != stop || st > 0 && start > stop || st < 0 && start < stop {
			return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE] Illegal sequence boundaries: %d to %d by %d: %w", start, stop, st, ErrInvalidInput))
		}
		var count uint64 = 1
		if st != 0 {
			count = uint64((stop-start)/st) + 1
		}
		if count > maxArrayLength || total+count > 1<<30 {
			return nil, e.rowErr(r, fmt.Errorf("[COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER] Can't create array with %d elements which exceeding the array size limit %d: %w", count, maxArrayLength, ErrInvalidInput))
		}
		total += count
		first[r], step[r] = start, st
		offs = append(offs, int32(total))
	}
	var child arrow.Array
	var err error
	switch elem.ID() {
	case arrow.INT8:
		child, err = sequenceValues[int8](ctx, e.mem, elem, offs, first, step)
	case arrow.INT16:
		child, err = sequenceValues[int16](ctx, e.mem, elem, offs, first, step)
	case arrow.INT32, arrow.DATE32:
		child, err = sequenceValues[int32](ctx, e.mem, elem, offs, first, step)
	case arrow.INT64, arrow.TIMESTAMP:
		child, err = sequenceValues[int64](ctx, e.mem, elem, offs, first, step)
	default:
		return nil, fmt.Errorf("vector: sequence of %s: %w", TypeName(elem), ErrType)
	}
	if err != nil {
		return nil, err
	}
	defer child.Release()
	return buildList(e.mem, e.dt, offs, valid, nulls, child), nil
}

// sequenceValues writes the elements of every row r (offs[r] to
// offs[r+1], from first[r] by step[r]) into a column of type dt,
// checking ctx every cancelCheckRows elements or rows: a batch may list
// up to 1<<30 elements.
func sequenceValues[T int8 | int16 | int32 | int64](ctx context.Context, mem memory.Allocator, dt arrow.DataType, offs []int32, first, step []int64) (arrow.Array, error) {
	total := int(offs[len(offs)-1])
	buf, out := fnFixedBuf[T](mem, total)
	work := 0 // elements and rows written since the last check of ctx
	for r := range first {
		if work++; work >= cancelCheckRows {
			if err := ctx.Err(); err != nil {
				buf.Release()
				return nil, err
			}
			work = 0
		}
		v, st := first[r], step[r]
		for k, end := int(offs[r]), int(offs[r+1]); k < end; {
			stop := min(end, k+cancelCheckRows-work)
			work += stop - k
			for ; k < stop; k++ {
				out[k] = T(v)
				v += st
			}
			if work >= cancelCheckRows {
				if err := ctx.Err(); err != nil {
					buf.Release()
					return nil, err
				}
				work = 0
			}
		}
	}
	return fnNewArray(dt, total, []*memory.Buffer{nil, buf}, nil, 0), nil
}
