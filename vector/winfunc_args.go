package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// evalAllContext is evalAll over the window operator's sorted input, which
// is one record of every row: an argument or key expression evaluated in
// one Eval call over a partition of tens of millions of rows (arithmetic,
// a CASE, a string function) runs for as long as the expression takes
// over all of them without looking at ctx (most kernels do not check it).
// So an expression that computes is evaluated over slices of
// cancelCheckRows rows with a check between them, and the pieces are
// concatenated (with checks too). A column reference or a constant costs
// nothing to evaluate and is evaluated whole: slicing and concatenating it
// would only add a copy.
func evalAllContext(ctx context.Context, mem memory.Allocator, evs []Evaluator, rec arrow.Record) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(evs))
	for i, ev := range evs {
		a, err := evalContext(ctx, mem, ev, rec)
		if err != nil {
			releaseArrays(out[:i])
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

func evalContext(ctx context.Context, mem memory.Allocator, ev Evaluator, rec arrow.Record) (arrow.Array, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	if n <= cancelCheckRows || evalIsFree(ev) {
		return ev.Eval(ctx, rec)
	}
	parts := make([]arrow.Array, 0, (n+cancelCheckRows-1)/cancelCheckRows)
	defer func() { releaseArrays(parts) }()
	for lo := 0; lo < n; lo += cancelCheckRows {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		piece := rec.NewSlice(int64(lo), int64(min(n, lo+cancelCheckRows)))
		a, err := ev.Eval(ctx, piece)
		piece.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	return concatColumnContext(ctx, mem, ev.DataType(), parts, n)
}

// evalIsFree reports whether ev only hands on a column of its input or a
// constant.
func evalIsFree(ev Evaluator) bool {
	if _, ok := ev.(ConstantEvaluator); ok {
		return true
	}
	c, ok := ev.(interface{ Column() (int, bool) })
	if !ok {
		return false
	}
	_, direct := c.Column()
	return direct
}
