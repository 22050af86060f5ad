package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// widestEvalExpr wraps an expression and records the most rows one Eval
// of it was given.
type widestEvalExpr struct {
	Expr
	widest *int
}

func (w widestEvalExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	ev, err := w.Expr.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	return widestEval{ev, w.widest}, nil
}

type widestEval struct {
	Evaluator
	widest *int
}

func (w widestEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	*w.widest = max(*w.widest, int(rec.NumRows()))
	return w.Evaluator.Eval(ctx, rec)
}

// TestWindowArgumentEvaluatedInChunks: a window function's argument
// expression over one partition of bigRows rows is evaluated at most
// cancelCheckRows rows per Eval (with a context check between), not in one
// call over the partition, and the result is the one-call result.
func TestWindowArgumentEvaluatedInChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := winTestRecord(mem)
	defer rec.Release()
	var widest int
	arg := widestEvalExpr{Add(Col("v"), TypedLit(Int64, int64(1))), &widest}
	running := WindowFrame{Start: FrameBound{Kind: FrameUnboundedPreceding}, End: FrameBound{Kind: FrameCurrentRow}}
	calls := []WindowCall{
		{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Args: []Expr{arg}}, Frame: running, Name: "s"},
		{Func: WinLag, N: 2, Args: []Expr{arg}, Frame: running, Name: "lag"},
	}
	rec.Retain()
	w, err := NewWindowOp(mem, NewOwnedScan(rec.Schema(), []arrow.Record{rec}), WindowOpSpec{Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var sums, lags []any
	for {
		out, err := w.Next(context.Background())
		if err != nil {
			break
		}
		for i := 0; i < int(out.NumRows()); i++ {
			sums = append(sums, ValueAt(out.Column(3), i))
			lags = append(lags, ValueAt(out.Column(4), i))
		}
		out.Release()
	}
	if len(sums) != bigRows {
		t.Fatalf("%d rows out, want %d", len(sums), bigRows)
	}
	if widest > cancelCheckRows {
		t.Fatalf("the argument was evaluated over %d rows in one call, want at most %d", widest, cancelCheckRows)
	}
	// The model: the argument over the whole column in one call.
	v := rec.Column(2).(*array.Int64)
	var sum int64
	for i := range bigRows {
		if v.IsValid(i) {
			sum += v.Value(i) + 1
		}
		if sums[i] != sum && !(sums[i] == nil && i == 0 && v.IsNull(0)) {
			if s, ok := sums[i].(int64); !ok || s != sum {
				// a running sum is NULL until the first non-null value
				if sum != 0 || sums[i] != nil {
					t.Fatalf("row %d: sum %v, want %d", i, sums[i], sum)
				}
			}
		}
		var want any
		if i >= 2 && v.IsValid(i-2) {
			want = v.Value(i-2) + 1
		}
		if lags[i] != want {
			t.Fatalf("row %d: lag %v, want %v", i, lags[i], want)
		}
	}
}
