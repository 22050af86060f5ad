package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The functions that search each array (array_contains, array_position,
// array_remove, array_min, array_max) walk every element of a batch; like
// the reshaping functions (array_chunks.go) they go through a row's
// elements in pieces of cancelCheckRows with an elemBudget reading ctx,
// encode a large element column with encodeContext and gather with
// takeContext, so one array of tens of millions of elements is not one
// uninterruptible loop.

func typeContains(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	if _, err := listArg(f, args, 0); err != nil {
		return nil, nil, err
	}
	switch f.Name {
	case "array_contains":
		return Boolean, kernContains, nil
	case "array_position":
		return Int64, kernContains, nil
	}
	return args[0].DataType(), kernRemove, nil
}

func typeMinMax(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := keyKind(Unwrap(lt.Elem())); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return lt.Elem(), kernMinMax, nil
}

// needleKeys encodes the element column and the searched values; the
// caller releases both.
func needleKeys(ctx context.Context, mem memory.Allocator, lv listView, needle arrow.Array) (*elemKeys, *elemKeys, error) {
	ek, err := newElemKeys(mem, lv.values.DataType())
	if err != nil {
		return nil, nil, err
	}
	if err := ek.encodeContext(ctx, lv.values); err != nil {
		ek.release()
		return nil, nil, err
	}
	nk, err := newElemKeys(mem, lv.values.DataType())
	if err != nil {
		ek.release()
		return nil, nil, err
	}
	if err := nk.encodeContext(ctx, needle); err != nil {
		ek.release()
		nk.release()
		return nil, nil, err
	}
	return ek, nk, nil
}

// kernContains is array_contains (true, false, or NULL when not found and
// the array has a NULL) and array_position (1-based, 0 when not found).
func kernContains(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok || arrs[1].DataType().ID() == arrow.NULL {
		return nullList(e, n), nil
	}
	ek, nk, err := needleKeys(ctx, e.mem, lv, arrs[1])
	if err != nil {
		return nil, err
	}
	defer ek.release()
	defer nk.release()
	pos := e.dt.ID() == arrow.INT64
	var bb *array.BooleanBuilder
	var ib *array.Int64Builder
	if pos {
		ib = array.NewInt64Builder(e.mem)
		defer ib.Release()
		ib.Reserve(n)
	} else {
		bb = array.NewBooleanBuilder(e.mem)
		defer bb.Release()
		bb.Reserve(n)
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) || arrs[1].IsNull(r) {
			if pos {
				ib.UnsafeAppendBoolToBitmap(false)
			} else {
				bb.UnsafeAppendBoolToBitmap(false)
			}
			continue
		}
		found, sawNull := int64(0), false
		for a := lv.offs[r]; a < lv.offs[r+1] && found == 0; {
			z := min(lv.offs[r+1], a+cancelCheckRows)
			for j := a; j < z; j++ {
				if ek.null(int(j)) {
					sawNull = true
					continue
				}
				if ek.equal(int(j), nk, r) {
					found = int64(j-lv.offs[r]) + 1
					break
				}
			}
			if err := budget.spend(int(z - a)); err != nil {
				return nil, err
			}
			a = z
		}
		switch {
		case pos:
			ib.UnsafeAppend(found)
		case found > 0:
			bb.UnsafeAppend(true)
		case sawNull:
			bb.UnsafeAppendBoolToBitmap(false)
		default:
			bb.UnsafeAppend(false)
		}
	}
	if pos {
		return ib.NewArray(), nil
	}
	return bb.NewArray(), nil
}

// kernRemove is array_remove: the elements not equal to the value (NULL
// elements stay; a NULL value gives NULL).
func kernRemove(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	ek, nk, err := needleKeys(ctx, e.mem, lv, arrs[1])
	if err != nil {
		return nil, err
	}
	defer ek.release()
	defer nk.release()
	out, err := newListOutContext(ctx, n, elemSpan(lv))
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) || arrs[1].IsNull(r) {
			out.nullRow()
			continue
		}
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
			for j := j0; j < j1; j++ {
				if ek.null(int(j)) || !ek.equal(int(j), nk, r) {
					out.idx = append(out.idx, j)
				}
			}
		})
		if err != nil {
			return nil, err
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, lv.values)
}

// kernMinMax is array_min / array_max: the extreme non-NULL element.
func kernMinMax(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	isMax := e.name == "array_max"
	cmp := newRowCmp(lv.values, false, true)
	idx := make([]int32, n)
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		idx[r] = -1
		if !lv.valid(r) {
			continue
		}
		best := int32(-1)
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
			for j := j0; j < j1; j++ {
				if lv.values.IsNull(int(j)) {
					continue
				}
				if best < 0 {
					best = j
					continue
				}
				c := cmp.cmp(j, best)
				if isMax && c > 0 || !isMax && c < 0 {
					best = j
				}
			}
		})
		if err != nil {
			return nil, err
		}
		idx[r] = best
	}
	return takeContext(ctx, e.mem, lv.values, idx)
}
