package plan

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

var emptySchema = arrow.NewSchema(nil, nil)

// foldConstant evaluates a constant expression (no columns) with vector's
// kernels, so that folding gives exactly what execution would. Runtime
// errors (overflow, division by zero) are returned: the caller decides
// whether to keep the expression unfolded.
func foldConstant(e Expr) (*Literal, error) {
	ve, err := ToVectorExpr(e, nil)
	if err != nil {
		return nil, err
	}
	ev, err := ve.Bind(emptySchema, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	if c, ok := ev.(vector.ConstantEvaluator); ok {
		return &Literal{Value: c.Value(), Type: ev.DataType()}, nil
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
	return &Literal{Value: v, Type: ev.DataType()}, nil
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
