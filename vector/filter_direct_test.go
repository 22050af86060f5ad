package vector_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// opaque hides an expression's shape from the operators' fast paths, so
// that the general path (mask, gather, evaluate) can be compared with them.
type opaque struct{ vector.Expr }

func (o opaque) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	ev, err := o.Expr.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	return opaqueEval{ev}, nil
}

type opaqueEval struct{ inner vector.Evaluator }

func (o opaqueEval) DataType() arrow.DataType { return o.inner.DataType() }
func (o opaqueEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	return o.inner.Eval(ctx, rec)
}

// TestFilterProjectFastPathsMatchGeneral runs WHERE <col op const> SELECT
// col, double ± × const through the fused paths (direct selection, gather
// with arithmetic) and through the general path, in every shape.
func TestFilterProjectFastPathsMatchGeneral(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: vector.Int32, Nullable: true},
		{Name: "l", Type: vector.Int64, Nullable: true},
		{Name: "ts", Type: vector.Timestamp, Nullable: true},
		{Name: "d", Type: vector.Date, Nullable: true},
		{Name: "f", Type: vector.Float64, Nullable: true},
	}, nil)
	r := rand.New(rand.NewSource(7))
	rows := make([]vt.Row, 300)
	for k := range rows {
		row := vt.Row{int32(r.Intn(20) - 10), int64(r.Intn(20) - 10), arrow.Timestamp(r.Intn(20) - 10), arrow.Date32(r.Intn(20) - 10), r.Float64()*4 - 2}
		for c := range row {
			if r.Intn(6) == 0 {
				row[c] = nil
			}
		}
		rows[k] = row
	}
	preds := []vector.Expr{
		vector.Gt(vector.Col("l"), vector.Lit(int64(3))),
		vector.Le(vector.Lit(int64(-2)), vector.Col("l")),
		vector.Eq(vector.Col("i"), vector.Lit(0)),
		vector.NotEq(vector.Col("i"), vector.Lit(int64(4))),
		vector.Lt(vector.Col("ts"), vector.Lit(arrow.Timestamp(1))),
		vector.Ge(vector.Col("d"), vector.Lit(arrow.Date32(-5))),
		vector.Gt(vector.Col("l"), vector.TypedLit(vector.Int64, nil)),
	}
	projs := []vector.NamedExpr{
		vector.As(vector.Col("l"), "l"),
		vector.As(vector.Mul(vector.Col("f"), vector.Lit(2.0)), "f2"),
		vector.As(vector.Sub(vector.Lit(1.5), vector.Col("f")), "f3"),
		vector.As(vector.Add(vector.Col("f"), vector.Lit(0.25)), "f4"),
		vector.As(vector.Sub(vector.Col("f"), vector.Lit(0.25)), "f5"),
		vector.As(vector.Add(vector.Col("i"), vector.Lit(1)), "i1"), // general path inside the selection path
	}
	for _, pred := range preds {
		var want []vt.Row
		{
			mem := vt.NewAllocator(t)
			recs := vt.BuildRecords(mem, schema, rows, vt.Shape{})
			scan, _ := vector.NewScan(schema, recs...)
			recs[0].Release()
			f, err := vector.NewFilter(mem, scan, opaque{pred})
			if err != nil {
				t.Fatal(err)
			}
			op, err := vector.NewProject(mem, opaqueOp{f}, projs)
			if err != nil {
				t.Fatal(err)
			}
			out, err := vector.Drain(context.Background(), op)
			if err != nil {
				t.Fatal(err)
			}
			want = vt.RowsOf(out...)
			for _, o := range out {
				o.Release()
			}
			op.Close()
		}
		p := pred
		vt.RunOperator(t, vt.OperatorCase{
			Name:   p.String(),
			Inputs: []vt.Input{{Schema: schema, Rows: rows}},
			Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
				f, err := vector.NewFilter(mem, in[0], p)
				if err != nil {
					return nil, err
				}
				return vector.NewProject(mem, f, projs)
			},
			Want:    want,
			Ordered: true,
		})
	}
}

// opaqueOp hides that its operator is a Filter, so Project gathers first.
type opaqueOp struct{ vector.Operator }
