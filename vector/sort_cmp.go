package vector

import (
	"cmp"
	"context"
	"slices"
)

// sortByCmp sorts rows by the comparators, ties by row (stably for rows
// in input order). Up to cancelCheckRows rows it is one pattern-defeating
// quicksort; above, it sorts blocks of cancelCheckRows rows and merges
// them pairwise, checking ctx between blocks and every cancelCheckRows
// merged rows, so that a cancelled query does not wait for the whole sort.
// On error rows are in no particular order.
//
// Its scratch comes from m's cache (bigMem), when m is not nil.
func sortByCmp(ctx context.Context, m *bigMem, rows []int32, keys []rowCmp) error {
	compare := func(a, b int32) int {
		for _, k := range keys {
			if c := k.cmp(a, b); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	}
	n := len(rows)
	if n <= cancelCheckRows {
		slices.SortFunc(rows, compare)
		return nil
	}
	for lo := 0; lo < n; lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		slices.SortFunc(rows[lo:min(lo+cancelCheckRows, n)], compare)
	}
	var scratch bigMem
	if m != nil {
		scratch.cache = m.cache
	}
	defer scratch.release()
	dst, err := bigAlloc[int32](ctx, &scratch, n)
	if err != nil {
		return err
	}
	src := rows
	for width := cancelCheckRows; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			if err := mergeRows(ctx, dst[lo:hi], src[lo:mid], src[mid:hi], compare); err != nil {
				return err
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &rows[0] {
		copy(rows, src)
	}
	return nil
}

// mergeRows merges the sorted runs a and b into out (len(a)+len(b)),
// taking from a on ties, and checks ctx every cancelCheckRows rows.
func mergeRows(ctx context.Context, out, a, b []int32, compare func(x, y int32) int) error {
	i, j := 0, 0
	for k := range out {
		if k%cancelCheckRows == cancelCheckRows-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if j >= len(b) || i < len(a) && compare(a[i], b[j]) <= 0 {
			out[k] = a[i]
			i++
		} else {
			out[k] = b[j]
			j++
		}
	}
	return nil
}

// sortRunsByCmp sorts, by the comparators, every run of rows whose ordered
// keys are equal (the rows of a run are already in input order). rows holds
// the rows of sorted, in the same order. It checks ctx every
// cancelCheckRows rows of runs.
func sortRunsByCmp(ctx context.Context, m *bigMem, sorted []keyRow, rows []int32, cmps []rowCmp) error {
	work := 0
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && sorted[hi].key == sorted[lo].key {
			hi++
		}
		if hi-lo > 1 {
			if err := sortByCmp(ctx, m, rows[lo:hi], cmps); err != nil {
				return err
			}
		}
		if work += hi - lo; work >= cancelCheckRows {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		lo = hi
	}
	return nil
}
