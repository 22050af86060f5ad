package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func unionAll(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
	return vector.NewUnion(mem, in...)
}

func TestUnion(t *testing.T) {
	xy := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: vector.Int64, Nullable: true},
		{Name: "y", Type: vector.String, Nullable: true},
	}, nil)
	uv := arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: vector.Int64, Nullable: false},
		{Name: "v", Type: vector.String, Nullable: true},
	}, nil)
	yx := arrow.NewSchema([]arrow.Field{
		{Name: "y", Type: vector.String, Nullable: true},
		{Name: "x", Type: vector.Int64, Nullable: true},
	}, nil)
	x := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.Int64, Nullable: true}}, nil)
	r1 := []vt.Row{{1, "a"}, {nil, "b"}, {3, nil}}
	r2 := []vt.Row{{4, "d"}, {5, "e"}}
	cases := []vt.OperatorCase{
		{Name: "two", Inputs: []vt.Input{{Schema: xy, Rows: r1}, {Schema: uv, Rows: r2}}, Build: unionAll,
			Want: append(append([]vt.Row{}, r1...), r2...), Ordered: true, WantSchema: xy},
		{Name: "three-with-empty", Inputs: []vt.Input{{Schema: xy}, {Schema: uv, Rows: r2}, {Schema: xy, Rows: r1}}, Build: unionAll,
			Want: append(append([]vt.Row{}, r2...), r1...), Ordered: true},
		{Name: "one", Inputs: []vt.Input{{Schema: xy, Rows: r1}}, Build: unionAll, Want: r1, Ordered: true},
		{Name: "all-empty", Inputs: []vt.Input{{Schema: xy}, {Schema: xy}}, Build: unionAll},
		{Name: "type-mismatch", Inputs: []vt.Input{{Schema: xy, Rows: r1}, {Schema: yx, Rows: nil}}, Build: unionAll,
			WantErr: "union input 1 (y: string, x: bigint) does not match input 0 (x: bigint, y: string): column 1 is string, not bigint"},
		{Name: "width-mismatch", Inputs: []vt.Input{{Schema: xy, Rows: r1}, {Schema: x, Rows: nil}}, Build: unionAll,
			WantErr: "union input 1 (x: bigint) has 1 columns but input 0 (x: bigint, y: string) has 2"},
		{Name: "no-inputs", Build: unionAll, WantErr: "union needs at least one input"},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}
