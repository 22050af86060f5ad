package vector_test

import (
	"context"
	"errors"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// Fault injection: every node of a fuzz expression is wrapped so that its
// k-th evaluation fails, for each k in turn. Each error path of each
// kernel above it then runs, and must release what it built (the checked
// allocator sees it) and pass the error on.

// errInjected is the error a faulty node returns.
var errInjected = errors.New("injected fault")

// faultState counts the evaluations of the wrapped nodes of one
// expression; the failAt-th fails.
type faultState struct {
	calls, failAt int
	fired         bool
	rowError      bool // fail with an *EvalError of row 0 instead of errInjected
}

// faultExpr wraps a node of the tree.
type faultExpr struct {
	vector.Expr
	st *faultState
}

func (f *faultExpr) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	ev, err := f.Expr.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if _, ok := ev.(vector.ConstantEvaluator); ok {
		return ev, nil // constants are read, not evaluated: nothing to fail
	}
	return &faultEval{Evaluator: ev, st: f.st, expr: f.String()}, nil
}

type faultEval struct {
	vector.Evaluator
	st   *faultState
	expr string
}

func (f *faultEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	f.st.calls++
	if f.st.calls == f.st.failAt {
		f.st.fired = true
		if f.st.rowError {
			return nil, &vector.EvalError{Expr: f.expr, Row: 0, Err: errInjected}
		}
		return nil, errInjected
	}
	return f.Evaluator.Eval(ctx, rec)
}

// maxFaults bounds the evaluations failed per input and kind of fault.
const maxFaults = 12

func checkFaults(mem memory.Allocator, data []byte, errorf func(format string, args ...any)) {
	st := &faultState{}
	b := &wideBuilder{exprBuilder: exprBuilder{data: data}, faults: st}
	e := b.expr()
	ev, err := e.Bind(fuzzWideSchema, mem)
	if err != nil {
		return
	}
	recs := vt.BuildRecords(mem, fuzzWideSchema, fuzzWideRows, vt.Shape{BatchSize: 3, Sliced: true, GarbageUnderNulls: true})
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	run := func() error {
		for _, rec := range recs {
			arr, err := ev.Eval(context.Background(), rec)
			if err != nil {
				return err
			}
			arr.Release()
		}
		return nil
	}
	if run() != nil {
		return // fails anyway: its error paths are exercised already
	}
	total := st.calls
	for _, rowError := range []bool{false, true} {
		for k := 1; k <= min(total, maxFaults); k++ {
			*st = faultState{failAt: k, rowError: rowError}
			err := run()
			if !rowError && st.fired && !errors.Is(err, errInjected) {
				errorf("%s: evaluation %d failed with an injected error, Eval returned %v", e, k, err)
			}
		}
	}
}
