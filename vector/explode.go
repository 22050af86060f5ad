package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// outputBatchRows bounds the records that operators which multiply rows
// (explode, sliding windows, sort) produce, so that one input batch cannot
// become an unboundedly large output batch.
const outputBatchRows = 1 << 16

// Explode produces one row per element of an array-valued expression, with
// the element in a new last column and the kept input columns repeated
// (Spark's explode; with outer, explode_outer). explode drops rows whose
// array is null or empty; explode_outer gives them one row with a null
// element. Rows keep their input order and elements their array order.
// Output records hold at most 64K rows unless a single array is longer.
type Explode struct {
	mem    memory.Allocator
	input  Operator
	expr   Expr
	list   Evaluator
	keep   []int
	outer  bool
	schema *arrow.Schema

	rec    arrow.Record // input batch being expanded (owned), or nil
	arr    *array.List  // its array values (owned)
	next   int          // next row of rec to expand
	rowIdx []int32      // scratch: input row of each output row
	elIdx  []int32      // scratch: element of each output row (-1: null)

	err    error
	closed bool
}

// NewExplode returns an Explode of input over listExpr, which must be of an
// array type; its elements go to a column named outName after the kept
// columns. keep lists the input columns to carry, in output order; nil
// keeps all of them (pass an empty non-nil slice to keep none). On success
// the Explode owns input.
func NewExplode(mem memory.Allocator, input Operator, listExpr Expr, outName string, keep []int) (*Explode, error) {
	return newExplode(mem, input, listExpr, outName, keep, false)
}

// NewExplodeOuter is NewExplode with Spark's explode_outer semantics: a null
// or empty array yields one row whose element is null.
func NewExplodeOuter(mem memory.Allocator, input Operator, listExpr Expr, outName string, keep []int) (*Explode, error) {
	return newExplode(mem, input, listExpr, outName, keep, true)
}

func newExplode(mem memory.Allocator, input Operator, listExpr Expr, outName string, keep []int, outer bool) (*Explode, error) {
	in := input.Schema()
	ev, err := listExpr.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	lt, ok := ev.DataType().(*arrow.ListType)
	if !ok {
		return nil, newBindError(listExpr, in,
			fmt.Errorf("explode expects an array, not %s: %w", TypeName(ev.DataType()), ErrType))
	}
	if keep == nil {
		keep = make([]int, in.NumFields())
		for i := range keep {
			keep[i] = i
		}
	}
	fields := make([]arrow.Field, 0, len(keep)+1)
	for _, c := range keep {
		if c < 0 || c >= in.NumFields() {
			return nil, fmt.Errorf("vector: explode: kept column %d out of %d columns of %s", c, in.NumFields(), sqlSchema(in))
		}
		fields = append(fields, in.Field(c))
	}
	fields = append(fields, arrow.Field{Name: outName, Type: lt.Elem(), Nullable: true})
	return &Explode{
		mem: mem, input: input, expr: listExpr, list: ev, keep: append([]int(nil), keep...), outer: outer,
		schema: arrow.NewSchema(fields, nil),
	}, nil
}

// Schema implements Operator.
func (e *Explode) Schema() *arrow.Schema { return e.schema }

// Next implements Operator.
func (e *Explode) Next(ctx context.Context) (arrow.Record, error) {
	for e.err == nil {
		// One input batch of large arrays makes many output records, all
		// before the input is asked (and checks) again: check here.
		if err := ctx.Err(); err != nil {
			e.err = err
			break
		}
		if e.rec == nil {
			if err := e.pull(ctx); err != nil {
				e.err = err
				break
			}
			if e.rec == nil {
				continue // skipped an empty batch
			}
		}
		out, err := e.expand()
		if err != nil {
			e.err = err
			break
		}
		if out != nil {
			return out, nil
		}
	}
	return nil, e.err
}

// pull reads the next input batch and evaluates its arrays.
func (e *Explode) pull(ctx context.Context) error {
	rec, err := e.input.Next(ctx)
	if err != nil {
		return err
	}
	if rec.NumRows() == 0 {
		// An empty batch (possibly without buffers) explodes to nothing;
		// Next pulls again.
		rec.Release()
		return nil
	}
	// Deferred, so that the batch is released when Eval panics too (a
	// query's allocator panics on an allocation far past its limit, and
	// the server recovers the panic: the batch must not leak).
	kept := false
	defer func() {
		if !kept {
			rec.Release()
		}
	}()
	arr, err := e.list.Eval(ctx, rec)
	if err != nil {
		return err
	}
	l, ok := arr.(*array.List)
	if !ok || l.Len() != int(rec.NumRows()) {
		arr.Release()
		return fmt.Errorf("vector: explode: %s returned %d values of %s for %d rows", e.expr, arr.Len(), TypeName(arr.DataType()), rec.NumRows())
	}
	e.rec, e.arr, e.next = rec, l, 0
	kept = true
	return nil
}

func (e *Explode) dropBatch() {
	e.rec.Release()
	e.arr.Release()
	e.rec, e.arr = nil, nil
}

// expand produces the next output record from the pending batch, or nil
// when the batch is used up without producing a row.
func (e *Explode) expand() (arrow.Record, error) {
	n := e.arr.Len()
	off := e.arr.Data().Offset()
	offsets := e.arr.Offsets()[off : off+n+1]
	var valid []byte
	if e.arr.NullN() > 0 {
		valid = e.arr.NullBitmapBytes()
	}
	rowIdx, elIdx := e.rowIdx[:0], e.elIdx[:0]
	nullEl := false
	r := e.next
	for ; r < n; r++ {
		lo, hi := offsets[r], offsets[r+1]
		if valid != nil && !bitutil.BitIsSet(valid, off+r) {
			lo, hi = 0, 0 // a null array's offsets may span garbage
		}
		cnt := int(hi - lo)
		if cnt == 0 && !e.outer {
			continue
		}
		if len(rowIdx) > 0 && len(rowIdx)+max(cnt, 1) > outputBatchRows {
			break
		}
		if cnt == 0 {
			rowIdx = append(rowIdx, int32(r))
			elIdx = append(elIdx, -1)
			nullEl = true
			continue
		}
		for j := lo; j < hi; j++ {
			rowIdx = append(rowIdx, int32(r))
			elIdx = append(elIdx, j)
		}
	}
	e.rowIdx, e.elIdx = rowIdx, elIdx
	e.next = r
	if len(rowIdx) == 0 {
		e.dropBatch()
		return nil, nil
	}
	out, err := e.build(rowIdx, elIdx, nullEl)
	if e.next == n {
		e.dropBatch()
	}
	return out, err
}

// build assembles the output record for the given row and element indices;
// nullEl says whether elIdx holds a -1 (a null element of explode_outer).
func (e *Explode) build(rowIdx, elIdx []int32, nullEl bool) (arrow.Record, error) {
	cols := make([]arrow.Array, len(e.keep)+1)
	// One element per row over a contiguous run of rows is a slice of the
	// input; otherwise the kept columns repeat through a gather.
	// rowIdx repeats rows and may skip some, so the endpoints alone do not
	// make it a run: check that every row appears exactly once.
	sliced := selIsRange(rowIdx)
	for i := 1; sliced && i < len(rowIdx); i++ {
		sliced = rowIdx[i] == rowIdx[i-1]+1
	}
	for i, c := range e.keep {
		col := e.rec.Column(c)
		if sliced {
			cols[i] = array.NewSlice(col, int64(rowIdx[0]), int64(rowIdx[len(rowIdx)-1])+1)
			continue
		}
		a, err := gather(e.mem, col, rowIdx)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[i] = a
	}
	values := e.arr.ListValues()
	last := len(cols) - 1
	switch {
	case values.Len() == 0:
		// Only null elements (explode_outer of null or empty arrays). Take
		// cannot gather from an empty array whose buffers may be absent.
		cols[last] = array.MakeArrayOfNull(e.mem, values.DataType(), len(elIdx))
	case !nullEl && selIsRange(elIdx):
		// Elements of consecutive arrays are adjacent in the values array.
		cols[last] = array.NewSlice(values, int64(elIdx[0]), int64(elIdx[len(elIdx)-1])+1)
	default:
		a, err := Take(e.mem, values, elIdx)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[last] = a
	}
	out := array.NewRecord(e.schema, cols, int64(len(rowIdx)))
	releaseArrays(cols)
	return out, nil
}

// Close implements Operator; it releases the pending batch and closes the
// input.
func (e *Explode) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.err == nil {
		e.err = errOpClosed
	}
	if e.rec != nil {
		e.dropBatch()
	}
	return e.input.Close()
}
