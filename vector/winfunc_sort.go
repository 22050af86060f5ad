package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// sortPerm returns the rows of data in (partition keys, order keys) order,
// ties in input order. When every key is fixed-width and has no nulls it
// sorts least significant key first with one stable radix sort per key
// (no comparator calls); otherwise it uses the Sort's comparator sort.
func (w *WindowOp) sortPerm(ctx context.Context, data arrow.Record) ([]int32, error) {
	for _, k := range w.sort.kinds {
		if k != sortFixed {
			return w.sort.sortRecord(ctx, data)
		}
	}
	keys, err := evalAll(ctx, w.sort.evs, data)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(keys)
	for _, k := range keys {
		if k.NullN() > 0 {
			return w.sort.sortRecord(ctx, data)
		}
	}
	n := int(data.NumRows())
	if err := w.sort.heap.set(int64(n) * (2*16 + 2*4)); err != nil {
		return nil, err
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	next := make([]int32, n)
	pairs := make([]keyRow, n)
	scratch := make([]keyRow, n)
	for k := len(keys) - 1; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		orderedKeys(pairs, keys[k], perm, w.sort.keys[k].Descending)
		// Sort positions in the current order, so that ties keep it.
		for i := range pairs {
			pairs[i].row = int32(i)
		}
		var sorted []keyRow
		if n < 256 {
			sorted, err = sortKeyRows(ctx, pairs)
		} else {
			sorted, err = radixSortKeys(ctx, pairs, scratch)
		}
		if err != nil {
			return nil, err
		}
		for i, p := range sorted {
			next[i] = perm[p.row]
		}
		perm, next = next, perm
	}
	return perm, nil
}
