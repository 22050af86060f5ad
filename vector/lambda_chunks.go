package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// A higher-order function's lambda runs over every element of a batch's
// arrays, and one row may hold tens of millions of them (an array made by
// sequence): one Eval of the body over all of them would not look at ctx
// (most kernels do not) for as long as the body takes. So, as
// evalAllContext does for window arguments, the body is evaluated over
// slices of cancelCheckRows elements with a check before each, and the
// results are concatenated with checks; the element-to-row map and the
// per-element result passes (filter, exists, forall) go through an
// elemBudget. A lambda body is an element-wise expression, so its value
// for an element does not depend on the slice it is evaluated in.

// lambdaPiece returns the parameter columns (owned by the caller) of the
// elements [a, z) of a chunked lambda evaluation.
type lambdaPiece func(a, z int) ([]arrow.Array, error)

// evalChunked is eval over len(rows) elements in slices of
// cancelCheckRows, reading ctx before each slice.
func (l *boundLambda) evalChunked(ctx context.Context, mem memory.Allocator, rec arrow.Record, rows []int32, piece lambdaPiece) (arrow.Array, error) {
	m := len(rows)
	var parts []arrow.Array
	defer func() { releaseArrays(parts) }()
	for a := 0; a == 0 || a < m; a += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		z := min(m, a+cancelCheckRows)
		params, err := piece(a, z)
		if err != nil {
			return nil, err
		}
		res, err := l.eval(ctx, mem, rec, rows[a:z], params)
		releaseArrays(params)
		if err != nil {
			return nil, err
		}
		parts = append(parts, res)
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	return concatColumnContext(ctx, mem, l.body.DataType(), parts, m)
}

// elemRowsContext is the input row of each element the first n rows of lv
// cover (NULL rows included), filled through budget.
func elemRowsContext(ctx context.Context, budget *elemBudget, lv listView, n int) ([]int32, error) {
	lo := lv.offs[0]
	m := int(lv.offs[n] - lo)
	rows, err := makeContext[int32](ctx, m, m)
	if err != nil {
		return nil, err
	}
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(a, z int32) {
			fill := rows[a-lo : z-lo]
			for k := range fill {
				fill[k] = int32(r)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// positionColumn is the position within its array of each element
// [lo+a, lo+z) of lv, rows the elements' rows.
func positionColumn(mem memory.Allocator, lv listView, rows []int32, a, z int) arrow.Array {
	lo := lv.offs[0]
	buf, out := fnFixedBuf[int32](mem, z-a)
	for k := range out {
		j := lo + int32(a+k)
		out[k] = j - lv.offs[rows[a+k]]
	}
	return fnNewArray(Int32, z-a, []*memory.Buffer{nil, buf}, nil, 0)
}

// rowShape is the offsets (from zero) and validity of lv's first n rows,
// for a result with one element per input element.
func rowShape(lv listView, n int) (offs []int32, valid []bool, nulls int) {
	lo := lv.offs[0]
	offs = make([]int32, n+1)
	valid = make([]bool, n)
	for r := 0; r <= n; r++ {
		offs[r] = lv.offs[r] - lo
		if r < n {
			if valid[r] = lv.valid(r); !valid[r] {
				nulls++
			}
		}
	}
	return offs, valid, nulls
}
