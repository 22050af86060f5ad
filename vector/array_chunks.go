package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// The collection functions that reshape arrays (reverse, slice, flatten,
// concat, array_compact, and the set functions array_distinct,
// array_union, array_intersect and array_except) walk every element of a
// batch. One row may hold tens of millions of elements (an array made by
// sequence or array_repeat), so a per-row check is not enough: their
// element loops go in pieces of at most cancelCheckRows elements, a
// budget counting rows and elements checks ctx whenever it is spent, the
// index list is allocated once (interruptibly) rather than grown by
// append, and the elements are gathered with listOut.buildContext.

// bigEncodeElems is the most elements encodeContext encodes in one call
// (a few ms of work).
const bigEncodeElems = 4 * cancelCheckRows

// elemBudget counts the rows and elements a kernel has handled and reads
// ctx every cancelCheckRows of them.
type elemBudget struct {
	ctx  context.Context
	left int
}

func newElemBudget(ctx context.Context) *elemBudget {
	return &elemBudget{ctx: ctx, left: cancelCheckRows}
}

// spend counts k units of work and returns ctx's error when the budget
// runs out.
func (b *elemBudget) spend(k int) error {
	b.left -= k
	if b.left > 0 {
		return nil
	}
	b.left = cancelCheckRows
	return b.ctx.Err()
}

// eachPiece calls fn over [lo, hi) in pieces of at most cancelCheckRows
// elements, spending each piece.
func (b *elemBudget) eachPiece(lo, hi int32, fn func(a, z int32)) error {
	for a := lo; a < hi; {
		z := min(hi, a+cancelCheckRows)
		fn(a, z)
		if err := b.spend(int(z - a)); err != nil {
			return err
		}
		a = z
	}
	return nil
}

// newListOutContext is newListOut with room for up to maxElems element
// indices, taken interruptibly (makeContext) instead of grown by append,
// which copies the whole list at each doubling in one call. The indices
// are only appended, so the memory need not be zeroed.
func newListOutContext(ctx context.Context, n, maxElems int) (*listOut, error) {
	idx, err := makeContext[int32](ctx, maxElems, maxElems)
	if err != nil {
		return nil, err
	}
	o := newListOut(n)
	o.idx = idx[:0]
	return o, nil
}

// elemSpan is the number of child elements the rows of lv cover.
func elemSpan(lv listView) int {
	if len(lv.offs) == 0 {
		return 0
	}
	return int(lv.offs[len(lv.offs)-1] - lv.offs[0])
}

// concatArraysContext is concatArrays with ctx checked as it copies.
func concatArraysContext(ctx context.Context, e *arrayFnEval, arrs []arrow.Array) (arrow.Array, error) {
	if len(arrs) == 1 {
		arrs[0].Retain()
		return arrs[0], nil
	}
	n := 0
	for _, a := range arrs {
		n += a.Len()
	}
	return concatColumnContext(ctx, e.mem, arrs[0].DataType(), arrs, n)
}

// encodeContext is encode with ctx checked: the KeyEncoder's
// EncodeContext, or the fallback's renderings cancelCheckRows at a time.
// Up to bigEncodeElems elements the one-call Encode runs after one check:
// EncodeContext maps its buffers outside the Go heap for a large input,
// and mapping and unmapping them for every batch of a few 100K elements
// cost the set functions up to half again their time (BenchmarkArrayFunctions).
func (k *elemKeys) encodeContext(ctx context.Context, arr arrow.Array) error {
	k.arr = arr
	if k.enc != nil {
		if arr.Len() <= bigEncodeElems {
			if err := ctx.Err(); err != nil {
				return err
			}
			return k.enc.Encode([]arrow.Array{arr})
		}
		return k.enc.EncodeContext(ctx, []arrow.Array{arr})
	}
	k.slow = k.slow[:0]
	return eachRangeErr(ctx, arr.Len(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k.slow = append(k.slow, slowKey(ValueAt(arr, i)))
		}
	})
}

// eachRangeErr is eachRange checking ctx before the first piece too.
func eachRangeErr(ctx context.Context, n int, fn func(lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return eachRange(ctx, n, fn)
}

// release returns what encodeContext mapped for a large column.
func (k *elemKeys) release() {
	if k.enc != nil {
		k.enc.Release()
	}
}
