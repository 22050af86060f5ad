package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var windowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64, Nullable: true},
	{Name: "window", Type: vector.WindowType, Nullable: true},
	{Name: "name", Type: vector.String, Nullable: true},
}, nil)

var windowRows = []vt.Row{
	{1, []any{10, 20}, "a"},
	{nil, nil, nil},
	{3, []any{30, nil}, "c"},
	{4, []any{40, 50}, nil},
}

func TestColumnRef(t *testing.T) {
	vt.RunExpr(t,
		vt.ExprCase{Name: "top", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("id"),
			Want: []any{1, nil, 3, 4}, WantType: vector.Int64},
		vt.ExprCase{Name: "case-insensitive", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("NAME"),
			Want: []any{"a", nil, "c", nil}, WantType: vector.String},
		vt.ExprCase{Name: "struct-field", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("window", "start"),
			Want: []any{10, nil, 30, 40}, WantType: vector.Timestamp},
		vt.ExprCase{Name: "struct-field-null", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("window", "end"),
			Want: []any{20, nil, nil, 50}, WantType: vector.Timestamp},
		vt.ExprCase{Name: "struct", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("window"),
			Want: []any{[]any{10, 20}, nil, []any{30, nil}, []any{40, 50}}},
		vt.ExprCase{Name: "by-index", Schema: windowSchema, Rows: windowRows, Expr: &vector.ColumnAt{Index: 2},
			Want: []any{"a", nil, "c", nil}},
		vt.ExprCase{Name: "unknown", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("nope"),
			WantErr: "cannot bind nope: unknown column nope (available columns: id, window, name)"},
		vt.ExprCase{Name: "unknown-field", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("window", "middle"),
			WantErr: "unknown column middle"},
		vt.ExprCase{Name: "field-of-scalar", Schema: windowSchema, Rows: windowRows, Expr: vector.Col("id", "x"),
			WantErr: "cannot access field x of a bigint value"},
	)
}

func TestLiteral(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.Int64, Nullable: true}}, nil)
	rows := []vt.Row{{1}, {2}, {nil}}
	vt.RunExpr(t,
		vt.ExprCase{Name: "int", Schema: s, Rows: rows, Expr: vector.Lit(7), Want: []any{7, 7, 7}, WantType: vector.Int32},
		vt.ExprCase{Name: "bigint", Schema: s, Rows: rows, Expr: vector.Lit(int64(7)), Want: []any{7, 7, 7}, WantType: vector.Int64},
		vt.ExprCase{Name: "string", Schema: s, Rows: rows, Expr: vector.Lit("x"), Want: []any{"x", "x", "x"}},
		vt.ExprCase{Name: "null", Schema: s, Rows: rows, Expr: vector.TypedLit(vector.String, nil), Want: []any{nil, nil, nil}},
		vt.ExprCase{Name: "decimal", Schema: s, Rows: rows, Expr: vector.TypedLit(vector.Decimal(5, 2), "1.5"), Want: []any{"1.50", "1.50", "1.50"}},
		vt.ExprCase{Name: "bad", Schema: s, Rows: rows, Expr: vector.TypedLit(vector.Int32, "x"), WantErr: "cannot append x (string) to a int column"},
	)
	if got := vector.Lit(int64(3)).String(); got != "3L" {
		t.Errorf("String = %q", got)
	}
}

func TestTake(t *testing.T) {
	mem := vt.NewAllocator(t)
	for _, shape := range vt.Shapes {
		recs := vt.BuildRecords(mem, windowSchema, windowRows, vt.Shape{BatchSize: 1024, Sliced: shape.Sliced, GarbageUnderNulls: shape.GarbageUnderNulls})
		out, err := vector.TakeRecord(mem, recs[0], []int32{3, -1, 0, 1, 2, 2})
		if err != nil {
			t.Fatal(err)
		}
		want := []vt.Row{windowRows[3], {nil, nil, nil}, windowRows[0], windowRows[1], windowRows[2], windowRows[2]}
		if got := vt.RowsOf(out); !vt.RowsEqual(want, got) {
			t.Errorf("%v: want\n%sgot\n%s", shape, vt.FormatRows(want), vt.FormatRows(got))
		}
		out.Release()
		recs[0].Release()
	}
}

func TestScan(t *testing.T) {
	vt.RunOperator(t, vt.OperatorCase{
		Name:    "identity",
		Inputs:  []vt.Input{{Schema: windowSchema, Rows: windowRows}},
		Build:   func(_ memory.Allocator, in []vector.Operator) (vector.Operator, error) { return in[0], nil },
		Want:    windowRows,
		Ordered: true,
		// The identity "operator" is the source, which passes empties on.
		NoEmptyBatches: true,
	})
}

func TestTakeFromEmptyArrayAllNull(t *testing.T) {
	mem := vt.NewAllocator(t)
	rec := vt.BuildRecord(mem, windowSchema, nil)
	defer rec.Release()
	out, err := vector.TakeRecord(mem, rec, []int32{-1, -1})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := vt.RowsOf(out); !vt.RowsEqual([]vt.Row{{nil, nil, nil}, {nil, nil, nil}}, got) {
		t.Fatalf("got %v", got)
	}
}

func TestGatherOnlyEmptyStrings(t *testing.T) {
	// All selected strings empty: the data buffer has zero length, which
	// must not lose the slack the 16-byte copy relies on.
	mem := vt.NewAllocator(t)
	s := arrow.NewSchema([]arrow.Field{{Name: "s", Type: vector.String, Nullable: true}}, nil)
	rec := vt.BuildRecord(mem, s, []vt.Row{{""}, {"abc"}, {""}})
	defer rec.Release()
	for _, idx := range [][]int32{{0}, {0, 2}, {2, 0, 0}} {
		out, err := vector.Gather(mem, rec.Column(0), idx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < out.Len(); i++ {
			if v := vector.ValueAt(out, i); v != "" {
				t.Errorf("row %d = %v", i, v)
			}
		}
		out.Release()
	}
}
