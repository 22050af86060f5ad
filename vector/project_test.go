package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func projectOf(exprs ...vector.NamedExpr) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewProject(mem, in[0], exprs)
	}
}

func TestProject(t *testing.T) {
	in := []vt.Input{{Schema: abSchema, Rows: abRows}}
	cases := []vt.OperatorCase{
		{Name: "columns", Inputs: in,
			Build: projectOf(vector.As(vector.Col("s"), "name"), vector.As(vector.Col("a"), "a"), vector.As(vector.Col("a"), "a2")),
			Want:  []vt.Row{{"x", 1, 1}, {"y", 5, 5}, {nil, nil, nil}, {"z", 7, 7}, {"w", 3, 3}}, Ordered: true,
			WantSchema: arrow.NewSchema([]arrow.Field{
				{Name: "name", Type: vector.String, Nullable: true},
				{Name: "a", Type: vector.Int64, Nullable: true},
				{Name: "a2", Type: vector.Int64, Nullable: true},
			}, nil)},
		{Name: "computed", Inputs: in,
			Build: projectOf(vector.As(vector.Mul(vector.Col("b"), vector.Lit(float64(2))), "b2"), vector.As(vector.Lit(int64(9)), "k"), vector.As(vector.Gt(vector.Col("a"), vector.Lit(int64(2))), "big")),
			Want:  []vt.Row{{3.0, 9, false}, {nil, 9, true}, {5.0, 9, nil}, {7.0, 9, true}, {-2.0, 9, true}}, Ordered: true},
		{Name: "by-index", Inputs: in, Build: projectOf(vector.As(&vector.ColumnAt{Index: 3}, "f")),
			Want: []vt.Row{{true}, {false}, {true}, {nil}, {true}}, Ordered: true},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: abSchema}}, Build: projectOf(vector.As(vector.Col("a"), "a"))},
		{Name: "after-filter", Inputs: in,
			Build: func(mem memory.Allocator, ops []vector.Operator) (vector.Operator, error) {
				f, err := vector.NewFilter(mem, ops[0], vector.Gt(vector.Col("a"), vector.Lit(int64(2))))
				if err != nil {
					return nil, err
				}
				p, err := vector.NewProject(mem, f, []vector.NamedExpr{vector.As(vector.Col("a"), "a"), vector.As(vector.Mul(vector.Col("b"), vector.Lit(float64(2))), "b2")})
				if err != nil {
					f.Close()
				}
				return p, err
			},
			Want: []vt.Row{{5, nil}, {7, 7.0}, {3, -2.0}}, Ordered: true},
		{Name: "unknown-column", Inputs: in, Build: projectOf(vector.As(vector.Col("a"), "a"), vector.As(vector.Col("zz"), "z")),
			WantErr: "cannot bind zz: unknown column zz (available columns: a, b, s, flag)"},
		{Name: "nil-expr", Inputs: in, Build: projectOf(vector.NamedExpr{Name: "x"}), WantErr: "expression 0 (x) is nil"},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}

// TestProjectZeroCopy checks that a bare column is passed through without a
// copy and keeps its field metadata.
func TestProjectZeroCopy(t *testing.T) {
	mem := vt.NewAllocator(t)
	md := arrow.NewMetadata([]string{"spark.watermarkDelayMs"}, []string{"1000"})
	s := arrow.NewSchema([]arrow.Field{{Name: "t", Type: vector.Timestamp, Nullable: true, Metadata: md}}, nil)
	rec := vt.BuildRecord(mem, s, []vt.Row{{1}, {2}})
	defer rec.Release()
	p, err := vector.NewProject(mem, opsScan(t, rec), []vector.NamedExpr{vector.As(vector.Col("t"), "t")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Schema().Field(0).Metadata.Equal(md) {
		t.Errorf("metadata lost: %v", p.Schema().Field(0).Metadata)
	}
	out, err := p.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.Column(0).Data().Buffers()[1] != rec.Column(0).Data().Buffers()[1] {
		t.Error("bare column was copied")
	}
}
