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
	keys, err := evalAllContext(ctx, w.mem, w.sort.evs, data)
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
	// Every pass over the rows, and the zeroing (page faults) of the
	// arrays, goes cancelCheckRows rows at a time with a check between
	// chunks: over a 20M-row partition one whole pass is hundreds of ms.
	perm, err := makeContext[int32](ctx, n, n)
	if err != nil {
		return nil, err
	}
	next, err := makeContext[int32](ctx, n, n)
	if err != nil {
		return nil, err
	}
	pairs, err := makeContext[keyRow](ctx, n, n)
	if err != nil {
		return nil, err
	}
	// The radix passes scatter into scratch: zeroed (faulted in) here a
	// chunk at a time, or the first scatter chunk would fault in pages all
	// over it.
	scratch, err := makeContext[keyRow](ctx, 0, n)
	if err != nil {
		return nil, err
	}
	scratch = scratch[:n]
	if err := eachRange(ctx, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			perm[i] = int32(i)
		}
	}); err != nil {
		return nil, err
	}
	for k := len(keys) - 1; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		desc := w.sort.keys[k].Descending
		if err := eachRange(ctx, n, func(lo, hi int) {
			orderedKeys(pairs[lo:hi], keys[k], perm[lo:hi], desc)
			// Sort positions in the current order, so that ties keep it.
			for i := lo; i < hi; i++ {
				pairs[i].row = int32(i)
			}
		}); err != nil {
			return nil, err
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
		if err := eachRange(ctx, n, func(lo, hi int) {
			for i, p := range sorted[lo:hi] {
				next[lo+i] = perm[p.row]
			}
		}); err != nil {
			return nil, err
		}
		perm, next = next, perm
	}
	return perm, nil
}
