package vector

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// sort_array and array_sort sort each array of a batch. One array may
// hold tens of millions of elements, and one slices.SortStableFunc over
// it would not look at ctx for seconds: an array longer than
// cancelCheckRows is sorted as runs of cancelCheckRows elements, then the
// runs are merged pairwise (left run first on ties, so the result stays
// stable), the element budget read every cancelCheckRows elements sorted
// or merged.

func typeSort(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := keyKind(Unwrap(lt.Elem())); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	if f.Name == "sort_array" && len(args) == 2 {
		v, ok := fnConstValue(args[1])
		if _, isBool := v.(bool); !ok || !isBool || Unwrap(args[1].DataType()).ID() != arrow.BOOL {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.SORT_ORDER_NOT_BOOLEAN_LITERAL] the sort order of sort_array must be a boolean literal, not %s: %w", f.Args[1], ErrType)
		}
	}
	return lt, kernSort, nil
}

// kernSort sorts each array: sort_array ascending with NULLs first
// (descending, with false, NULLs last), array_sort ascending with NULLs
// last.
func kernSort(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	desc, nullsFirst := false, true
	if len(arrs) == 2 {
		if b, ok := arrs[1].(*array.Boolean); ok && b.Len() > 0 && b.IsValid(0) && !b.Value(0) {
			desc, nullsFirst = true, false
		}
	}
	if e.name == "array_sort" {
		nullsFirst = false
	}
	cmp := newRowCmp(lv.values, desc, nullsFirst)
	out, err := newListOutContext(ctx, n, elemSpan(lv))
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	var scratch []int32
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) {
			out.nullRow()
			continue
		}
		start := len(out.idx)
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
			for j := j0; j < j1; j++ {
				out.idx = append(out.idx, j)
			}
		})
		if err != nil {
			return nil, err
		}
		row := out.idx[start:]
		if len(row) <= cancelCheckRows {
			slices.SortStableFunc(row, cmp.cmp)
		} else {
			if scratch, err = sortRunsContext(budget, row, scratch, cmp.cmp); err != nil {
				return nil, err
			}
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, lv.values)
}

// sortRunsContext stably sorts row: runs of cancelCheckRows sorted, then
// merged pairwise through scratch (grown to len(row) and returned for
// reuse), spending budget as it goes.
func sortRunsContext(budget *elemBudget, row, scratch []int32, cmp func(a, b int32) int) ([]int32, error) {
	m := len(row)
	for a := 0; a < m; a += cancelCheckRows {
		z := min(m, a+cancelCheckRows)
		slices.SortStableFunc(row[a:z], cmp)
		if err := budget.spend(z - a); err != nil {
			return scratch, err
		}
	}
	if cap(scratch) < m {
		scratch = make([]int32, m)
	}
	src, dst := row, scratch[:m]
	for width := cancelCheckRows; width < m; width *= 2 {
		for lo := 0; lo < m; lo += 2 * width {
			mid, hi := min(m, lo+width), min(m, lo+2*width)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				// Take from the right run only when strictly smaller:
				// equal elements keep their order.
				if cmp(src[j], src[i]) < 0 {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
				if k%cancelCheckRows == 0 {
					if err := budget.spend(cancelCheckRows); err != nil {
						return scratch, err
					}
				}
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &row[0] {
		copy(row, src)
	}
	return scratch, nil
}
