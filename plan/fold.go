package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

var emptySchema = arrow.NewSchema(nil, nil)

// foldBudget bounds the Arrow bytes one folded constant may allocate
// while it is evaluated. Folding runs while a statement is planned, on no
// query's allocator and under no query's context: a constant such as
// sort_array(sequence(20000000, 1, -1)) folded in full would take
// hundreds of MB, and its time, outside the query's memory limit and out
// of reach of its cancellation. A constant over the budget is left
// unfolded, for run time, where the query's allocator and context
// govern it (as a constant whose evaluation fails is).
const foldBudget = 4 << 20

// errFoldTooLarge is the panic of foldAllocator past its budget, and
// foldConstant's error.
var errFoldTooLarge = errors.New("plan: constant too large to fold")

// foldAllocator is the Go allocator counting every byte allocated
// (freed bytes are not given back: the count bounds the work too),
// panicking with errFoldTooLarge past left (a reservation is refused
// instead). The kernels allocate on the
// calling goroutine, where foldConstant recovers the panic; what the
// unwound kernel held is Go memory the collector takes.
type foldAllocator struct {
	mem  memory.Allocator
	left int
}

// newFoldAllocator is a foldAllocator over the Go allocator with
// foldBudget to spend.
func newFoldAllocator() *foldAllocator {
	return &foldAllocator{mem: memory.NewGoAllocator(), left: foldBudget}
}

func (a *foldAllocator) take(n int) {
	if n > a.left {
		panic(errFoldTooLarge)
	}
	a.left -= n
}

// Allocate implements memory.Allocator.
func (a *foldAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *foldAllocator) Reallocate(size int, b []byte) []byte {
	a.take(max(size-len(b), 0))
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *foldAllocator) Free(b []byte) { a.mem.Free(b) }

// Reserve implements vector.MemoryReserver: a kernel's Go-heap scratch
// (repeat's value before it is copied) spends the same budget, and is
// refused (errFoldTooLarge, as an error: the kernel has built nothing
// yet) before it is allocated. Returned bytes are not given back, as
// freed Arrow bytes are not.
func (a *foldAllocator) Reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	if n > int64(a.left) {
		return errFoldTooLarge
	}
	a.left -= int(n)
	return nil
}

// foldConstant evaluates a constant expression (no columns) with vector's
// kernels, so that folding gives exactly what execution would. Runtime
// errors (overflow, division by zero) are returned: the caller decides
// whether to keep the expression unfolded. A constant whose evaluation
// allocates more than foldBudget is errFoldTooLarge.
func foldConstant(e Expr) (l *Literal, err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errFoldTooLarge {
				panic(r)
			}
			l, err = nil, fmt.Errorf("%w: %s", errFoldTooLarge, shortExpr(e))
		}
	}()
	mem := newFoldAllocator()
	ve, err := ToVectorExpr(e, nil)
	if err != nil {
		return nil, err
	}
	ev, err := ve.Bind(emptySchema, mem)
	if err != nil {
		return nil, err
	}
	if c, ok := ev.(vector.ConstantEvaluator); ok {
		return &Literal{Value: c.Value(), Type: ev.DataType(), dtFields: dtFieldsOf(e)}, nil
	}
	if vector.TooLargeToFold(ev) {
		// Its size is known to be over the folding cap: not built.
		return nil, fmt.Errorf("%w: %s", errFoldTooLarge, shortExpr(e))
	}
	rec := array.NewRecord(emptySchema, nil, 1)
	defer rec.Release()
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	if arr.Len() != 1 {
		return nil, fmt.Errorf("plan: constant %s gave %d values", e, arr.Len())
	}
	v := vector.ValueAt(arr, 0)
	if d, ok := arr.(*array.Duration); ok && !d.IsNull(0) {
		v = d.Value(0)
	}
	// A day-time interval keeps its type's fields (the schema's metadata
	// and CAST AS STRING read them).
	return &Literal{Value: v, Type: ev.DataType(), dtFields: dtFieldsOf(e)}, nil
}

// aggResultType types an aggregate by asking vector's hash aggregation for
// its output schema over placeholder columns of the argument types.
func aggResultType(a *AggregateExpr) (arrow.DataType, error) {
	fields := make([]arrow.Field, 0, len(a.Args))
	args := make([]vector.Expr, len(a.Args))
	for i, x := range a.Args {
		if l, ok := x.(*Literal); ok {
			args[i] = literalToVector(l)
			continue
		}
		fields = append(fields, arrow.Field{Name: x.String(), Type: x.DataType(), Nullable: true})
		args[i] = &vector.ColumnAt{Index: len(fields) - 1, Name: x.String()}
	}
	scan, err := vector.NewScan(arrow.NewSchema(fields, nil))
	if err != nil {
		return nil, err
	}
	spec := vector.AggregateSpec{Aggregates: []vector.AggregateCall{{
		Func: a.Func, Args: args, Distinct: a.Distinct, IgnoreNulls: a.IgnoreNulls, Name: "a",
	}}}
	agg, err := vector.NewHashAggregate(memory.DefaultAllocator, scan, spec)
	if err != nil {
		scan.Close()
		return nil, err
	}
	defer agg.Close()
	return agg.Schema().Field(0).Type, nil
}

// shortExpr is e's text cut to 100 bytes, for an error message.
func shortExpr(e Expr) string {
	s := e.String()
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
