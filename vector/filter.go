package vector

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// errOpClosed is returned by Next after Close.
var errOpClosed = errors.New("vector: operator is closed")

// Filter passes the rows of its input for which a boolean predicate is
// true; rows where it is false or null are dropped (SQL's WHERE). Batches
// that lose every row are skipped, batches that keep every row are passed
// on as they are, and a contiguous run of kept rows becomes a zero-copy
// slice; otherwise the kept rows are gathered through a selection vector.
type Filter struct {
	mem    memory.Allocator
	input  Operator
	expr   Expr
	pred   Evaluator
	always int // constant predicate: 1 keeps every row, 0 drops every row, -1 not constant
	sel    []int32
	direct *directCompare // column-vs-constant predicate selected without a mask
	// tree selects a batch of at most selTreeMaxRows rows without masks
	// (filter_select.go); larger batches go through the masks.
	tree   selNode
	err    error // sticky: io.EOF or the first error
	closed bool
}

// NewFilter returns a Filter of input by predicate, which must be of type
// boolean (or an untyped NULL, which keeps nothing). On success the Filter
// owns input.
func NewFilter(mem memory.Allocator, input Operator, predicate Expr) (*Filter, error) {
	schema := input.Schema()
	ev, err := predicate.Bind(schema, mem)
	if err != nil {
		return nil, err
	}
	dt := ev.DataType()
	if dt.ID() != arrow.BOOL && dt.ID() != arrow.NULL {
		return nil, newBindError(predicate, schema,
			fmt.Errorf("filter condition %s is of type %s, not boolean: %w", predicate, TypeName(dt), ErrType))
	}
	f := &Filter{mem: mem, input: input, expr: predicate, pred: ev, always: -1}
	if c, ok := ev.(ConstantEvaluator); ok {
		// A constant condition needs no evaluation: WHERE true passes every
		// batch through, WHERE false or NULL reads nothing at all.
		if v, _ := c.Value().(bool); v {
			f.always = 1
		} else {
			f.always = 0
		}
	}
	if f.always < 0 {
		f.direct = newDirectCompare(predicate, schema, mem)
		if f.direct == nil {
			f.tree = newSelNode(predicate, schema, mem)
		}
	}
	return f, nil
}

// Schema implements Operator; it is the input's schema.
func (f *Filter) Schema() *arrow.Schema { return f.input.Schema() }

// Next implements Operator.
func (f *Filter) Next(ctx context.Context) (arrow.Record, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.always == 0 {
		f.err = io.EOF
		return nil, f.err
	}
	rec, sel, err := f.nextSelected(ctx)
	if err != nil {
		return nil, err
	}
	if sel == nil {
		return rec, nil
	}
	defer rec.Release()
	out, err := gatherRecord(f.mem, rec, sel)
	if err != nil {
		f.err = err
		return nil, err
	}
	return out, nil
}

// nextSelected returns the next input batch with at least one passing row
// and the passing rows' indices, or a nil selection when every row passes.
// The batch is owned by the caller; the selection is valid until the next
// call. Project uses it to gather only what it computes (and to fuse simple
// arithmetic into the gather) instead of gathering every column first.
func (f *Filter) nextSelected(ctx context.Context) (arrow.Record, []int32, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	if f.always == 0 {
		f.err = io.EOF
		return nil, nil, f.err
	}
	for {
		rec, err := f.input.Next(ctx)
		if err != nil {
			f.err = err
			return nil, nil, err
		}
		if rec.NumRows() == 0 {
			// An empty batch (possibly without buffers) selects nothing.
			rec.Release()
			continue
		}
		if f.always == 1 {
			return rec, nil, nil
		}
		sel, all, err := f.selectionReleasing(ctx, rec)
		if err != nil {
			f.err = err
			return nil, nil, err
		}
		switch {
		case all:
			return rec, nil, nil
		case len(sel) == 0:
			rec.Release()
		case int64(len(sel)) == rec.NumRows():
			return rec, nil, nil
		default:
			return rec, sel, nil
		}
	}
}

// selectionReleasing is selection releasing rec when it fails, by a
// defer: a query's allocator panics on an allocation far past its limit
// and the server recovers the panic, so the batch (perhaps a table's, not
// the query's) must not stay retained by the unwound frame.
func (f *Filter) selectionReleasing(ctx context.Context, rec arrow.Record) (sel []int32, all bool, err error) {
	ok := false
	defer func() {
		if !ok {
			rec.Release()
		}
	}()
	sel, all, err = f.selection(ctx, rec)
	ok = err == nil
	return sel, all, err
}

// selection returns the indices of the rows of rec (borrowed) that pass,
// or all (and no indices) when the predicate's mask is true for every row:
// a condition that holds everywhere (Nexmark q7's inferred `price IS NOT
// NULL` over a column without nulls) then costs a population count of the
// mask instead of an index per row.
func (f *Filter) selection(ctx context.Context, rec arrow.Record) ([]int32, bool, error) {
	if f.direct != nil {
		f.sel = f.direct.selectRows(rec, f.sel)
		return f.sel, false, nil
	}
	if n := int(rec.NumRows()); f.tree != nil && n <= selTreeMaxRows {
		if cap(f.sel) < n {
			f.sel = make([]int32, n)
		}
		f.sel = f.tree.refine(rec, f.sel, true)
		return f.sel, false, nil
	}
	mask, err := f.pred.Eval(ctx, rec)
	if err != nil {
		return nil, false, err
	}
	defer mask.Release()
	if mask.Len() != int(rec.NumRows()) {
		return nil, false, fmt.Errorf("vector: filter condition %s returned %d values for %d rows", f.expr, mask.Len(), rec.NumRows())
	}
	b, ok := mask.(*array.Boolean)
	if !ok {
		// NULL-typed condition: no row is true.
		return f.sel[:0], false, nil
	}
	if allTrue(b) {
		return f.sel[:0], true, nil
	}
	f.sel = selectTrue(f.sel, b)
	return f.sel, false, nil
}

// Rerun implements Rerunner: the bound predicate and the selection
// scratch are kept, the run's end or error is forgotten, and the input
// reruns.
func (f *Filter) Rerun() error {
	if f.closed {
		return fmt.Errorf("vector: filter: %w", ErrCannotRerun)
	}
	f.err = nil
	return Rerun(f.input)
}

// Close implements Operator; it closes the input.
func (f *Filter) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.sel = nil
	if f.err == nil {
		f.err = errOpClosed
	}
	return f.input.Close()
}
