package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// maxReplicas bounds one row's copies (EXCEPT ALL / INTERSECT ALL give a
// row as many times as its count, which is at most an input's size).
const maxReplicas = 1 << 31

// ReplicateCount is the array [1, 2, ..., n] for a BIGINT n (empty for n
// <= 0 or NULL): exploded, it repeats a row n times, as Spark's
// ReplicateRows does for EXCEPT ALL and INTERSECT ALL.
func ReplicateCount(n Expr) Expr { return &replicateCount{n: n} }

type replicateCount struct{ n Expr }

func (r *replicateCount) String() string { return funcString("replicate_rows", r.n) }

func (r *replicateCount) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	n, err := r.n.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if n.DataType().ID() != arrow.INT64 {
		return nil, newBindError(r, in, fmt.Errorf("replicate_rows needs a BIGINT count, got %s: %w", TypeName(n.DataType()), ErrType))
	}
	return &replicateEval{n: n, mem: mem}, nil
}

type replicateEval struct {
	n   Evaluator
	mem memory.Allocator
}

func (e *replicateEval) DataType() arrow.DataType { return arrow.ListOf(Int64) }

func (e *replicateEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := e.n.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	counts := a.(*array.Int64)
	b := array.NewListBuilder(e.mem, Int64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int64Builder)
	for i := 0; i < counts.Len(); i++ {
		b.Append(true)
		if counts.IsNull(i) {
			continue
		}
		n := counts.Value(i)
		if n > maxReplicas {
			return nil, fmt.Errorf("replicate_rows: %d copies of one row: %w", n, ErrOverflow)
		}
		for k := int64(1); k <= n; k++ {
			vb.Append(k)
		}
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	return b.NewArray(), nil
}
