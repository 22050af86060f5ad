package vector

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ErrScalarSubqueryTooManyRows is a scalar subquery that returned more than
// one row (Spark's SCALAR_SUBQUERY_TOO_MANY_ROWS).
var ErrScalarSubqueryTooManyRows = errors.New("[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression")

// ScalarSubqueryCheck returns Value, raising ErrScalarSubqueryTooManyRows
// on a row whose Count (a BIGINT: the number of rows the subquery
// returned) is above one. The planner evaluates an uncorrelated scalar
// subquery as a global aggregate of count(*) and first(value) joined to
// every row, so the check is one pass over a column of counts.
func ScalarSubqueryCheck(count, value Expr) Expr {
	return &subqueryCheck{count: count, value: value}
}

type subqueryCheck struct{ count, value Expr }

func (s *subqueryCheck) String() string { return s.value.String() }

func (s *subqueryCheck) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	c, err := s.count.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if c.DataType().ID() != arrow.INT64 {
		return nil, newBindError(s, in, fmt.Errorf("the row count of a scalar subquery must be BIGINT, got %s: %w", TypeName(c.DataType()), ErrType))
	}
	v, err := s.value.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	return &subqueryCheckEval{count: c, value: v}, nil
}

type subqueryCheckEval struct{ count, value Evaluator }

func (e *subqueryCheckEval) DataType() arrow.DataType { return e.value.DataType() }

func (e *subqueryCheckEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	c, err := e.count.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	counts := c.(*array.Int64)
	vals := counts.Int64Values()
	for i, n := range vals {
		if n > 1 && counts.IsValid(i) {
			return nil, ErrScalarSubqueryTooManyRows
		}
	}
	return e.value.Eval(ctx, rec)
}
