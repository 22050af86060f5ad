package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var listSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64, Nullable: true},
	{Name: "xs", Type: vector.ListOf(vector.Int64), Nullable: true},
	{Name: "tag", Type: vector.String, Nullable: true},
}, nil)

var listRows = []vt.Row{
	{1, []any{10, 11, 12}, "a"},
	{2, nil, "b"},
	{3, []any{}, "c"},
	{4, []any{nil, 40}, nil},
	{nil, []any{50}, "e"},
}

func explodeOf(outer bool, keep []int) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		if outer {
			return vector.NewExplodeOuter(mem, in[0], vector.Col("xs"), "x", keep)
		}
		return vector.NewExplode(mem, in[0], vector.Col("xs"), "x", keep)
	}
}

func TestExplode(t *testing.T) {
	in := []vt.Input{{Schema: listSchema, Rows: listRows}}
	cases := []vt.OperatorCase{
		{Name: "all-columns", Inputs: in, Build: explodeOf(false, nil), Ordered: true,
			Want: []vt.Row{
				{1, []any{10, 11, 12}, "a", 10}, {1, []any{10, 11, 12}, "a", 11}, {1, []any{10, 11, 12}, "a", 12},
				{4, []any{nil, 40}, nil, nil}, {4, []any{nil, 40}, nil, 40},
				{nil, []any{50}, "e", 50},
			},
			WantSchema: arrow.NewSchema(append(append([]arrow.Field{}, listSchema.Fields()...),
				arrow.Field{Name: "x", Type: vector.Int64, Nullable: true}), nil)},
		{Name: "keep", Inputs: in, Build: explodeOf(false, []int{2, 0}), Ordered: true,
			Want: []vt.Row{{"a", 1, 10}, {"a", 1, 11}, {"a", 1, 12}, {nil, 4, nil}, {nil, 4, 40}, {"e", nil, 50}}},
		{Name: "keep-none", Inputs: in, Build: explodeOf(false, []int{}), Ordered: true,
			Want: []vt.Row{{10}, {11}, {12}, {nil}, {40}, {50}}},
		{Name: "outer", Inputs: in, Build: explodeOf(true, []int{0}), Ordered: true,
			Want: []vt.Row{{1, 10}, {1, 11}, {1, 12}, {2, nil}, {3, nil}, {4, nil}, {4, 40}, {nil, 50}}},
		{Name: "only-empty-and-null", Inputs: []vt.Input{{Schema: listSchema, Rows: listRows[1:3]}}, Build: explodeOf(false, nil)},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: listSchema}}, Build: explodeOf(true, nil)},
		{Name: "not-a-list", Inputs: in, Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			return vector.NewExplode(mem, in[0], vector.Col("tag"), "x", nil)
		}, WantErr: "cannot bind tag: explode expects an array, not string: type mismatch (available columns: id, xs, tag)"},
		{Name: "bad-keep", Inputs: in, Build: explodeOf(false, []int{3}), WantErr: "kept column 3 out of 3 columns of (id: bigint, xs: array<bigint>, tag: string)"},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}

// TestExplodeBatchBound checks that long arrays are spread over records of
// at most 64K rows, with no row lost or split across records.
func TestExplodeBatchBound(t *testing.T) {
	mem := vt.NewAllocator(t)
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64, Nullable: true},
		{Name: "xs", Type: vector.ListOf(vector.Int64), Nullable: true},
	}, nil)
	sizes := []int{30000, 30000, 30000, 70000, 5}
	var rows []vt.Row
	total := 0
	for i, n := range sizes {
		xs := make([]any, n)
		for j := range xs {
			xs[j] = j
		}
		rows = append(rows, vt.Row{i, xs})
		total += n
	}
	rec := vt.BuildRecord(mem, s, rows)
	defer rec.Release()
	e, err := vector.NewExplode(mem, opsScan(t, rec), vector.Col("xs"), "x", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out, err := vector.Drain(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var recRows []int64
	for _, o := range out {
		recRows = append(recRows, o.NumRows())
		for _, r := range vt.RowsOf(o) {
			got = append(got, r[0].(int64))
		}
		o.Release()
	}
	// 30000+30000 fit; the third would pass 65536; 70000 alone; then 5.
	want := []int64{60000, 30000, 70000, 5}
	if len(recRows) != len(want) {
		t.Fatalf("record sizes %v, want %v", recRows, want)
	}
	for i := range want {
		if recRows[i] != want[i] {
			t.Fatalf("record sizes %v, want %v", recRows, want)
		}
	}
	if len(got) != total {
		t.Fatalf("%d rows, want %d", len(got), total)
	}
}
