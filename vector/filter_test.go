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

var abSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: vector.Int64, Nullable: true},
	{Name: "b", Type: vector.Float64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "flag", Type: vector.Boolean, Nullable: true},
}, nil)

var abRows = []vt.Row{
	{1, 1.5, "x", true},
	{5, nil, "y", false},
	{nil, 2.5, nil, true},
	{7, 3.5, "z", nil},
	{3, -1.0, "w", true},
}

func filterBy(pred vector.Expr) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewFilter(mem, in[0], pred)
	}
}

// patternRows has runs that exercise every word case of the selection
// builder: all-true words, all-false words, sparse and dense words, and
// nulls, over more than 64 rows.
func patternRows(n int, seed int64) ([]vt.Row, []vt.Row) {
	r := rand.New(rand.NewSource(seed))
	var rows, want []vt.Row
	for i := 0; i < n; i++ {
		var v any
		switch region := (i / 100) % 5; region {
		case 0:
			v = true
		case 1:
			v = false
		case 2:
			v = r.Intn(20) == 0
		case 3:
			v = r.Intn(20) != 0
		default:
			switch r.Intn(3) {
			case 0:
				v = nil
			case 1:
				v = true
			default:
				v = false
			}
		}
		row := vt.Row{int64(i), v}
		rows = append(rows, row)
		if v == true {
			want = append(want, row)
		}
	}
	return rows, want
}

var dictSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: vector.Int64, Nullable: true},
	{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}, Nullable: true},
	{Name: "m", Type: vector.Decimal(10, 2), Nullable: true},
}, nil)

var dictRows = []vt.Row{{0, "x", "1.00"}, {1, nil, "2.50"}, {2, "y", nil}, {3, "x", "-3.25"}}

var flagSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: vector.Int64, Nullable: true},
	{Name: "flag", Type: vector.Boolean, Nullable: true},
}, nil)

func TestFilter(t *testing.T) {
	patRows, patWant := patternRows(700, 1)
	cases := []vt.OperatorCase{
		{Name: "gt", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Gt(vector.Col("a"), vector.Lit(int64(2)))),
			Want: []vt.Row{abRows[1], abRows[3], abRows[4]}, Ordered: true, WantSchema: abSchema},
		{Name: "bool-column-with-nulls", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Col("flag")),
			Want: []vt.Row{abRows[0], abRows[2], abRows[4]}, Ordered: true},
		{Name: "all-filtered", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Gt(vector.Col("a"), vector.Lit(int64(100))))},
		{Name: "all-pass", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows[:2]}}, Build: filterBy(vector.Gt(vector.Col("a"), vector.Lit(int64(-100)))),
			Want: abRows[:2], Ordered: true},
		{Name: "true", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(true)),
			Want: abRows, Ordered: true},
		{Name: "false", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(false))},
		{Name: "null", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(nil))},
		{Name: "null-boolean", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.TypedLit(vector.Boolean, nil))},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: abSchema}}, Build: filterBy(vector.Gt(vector.Col("a"), vector.Lit(int64(2))))},
		{Name: "patterns", Inputs: []vt.Input{{Schema: flagSchema, Rows: patRows}}, Build: filterBy(vector.Col("flag")),
			Want: patWant, Ordered: true},
		{Name: "struct-column", Inputs: []vt.Input{{Schema: windowSchema, Rows: windowRows}}, Build: filterBy(vector.Gt(vector.Col("id"), vector.Lit(int64(2)))),
			Want: windowRows[2:], Ordered: true},
		{Name: "list-column", Inputs: []vt.Input{{Schema: listSchema, Rows: listRows}}, Build: filterBy(vector.Gt(vector.Col("id"), vector.Lit(int64(1)))),
			Want: []vt.Row{listRows[1], listRows[2], listRows[3]}, Ordered: true},
		{Name: "dictionary-column", Inputs: []vt.Input{{Schema: dictSchema, Rows: dictRows}}, Build: filterBy(vector.Gt(vector.Col("i"), vector.Lit(int64(0)))),
			Want: dictRows[1:], Ordered: true},
		{Name: "not-boolean", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Col("a")),
			WantErr: "cannot bind a: filter condition a is of type bigint, not boolean: type mismatch (available columns: a, b, s, flag)"},
		{Name: "unknown-column", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Col("nope")),
			WantErr: "unknown column nope (available columns: a, b, s, flag)"},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}

// TestFilterRandomMasks checks the selection builder against a plain loop
// for random masks of every density, at every bit offset of a 64-bit word.
func TestFilterRandomMasks(t *testing.T) {
	mem := vt.NewAllocator(t)
	r := rand.New(rand.NewSource(7))
	for _, density := range []float64{0, 0.01, 0.2, 0.5, 0.9, 0.99, 1} {
		for _, withNulls := range []bool{false, true} {
			n := 300 + r.Intn(200)
			rows := make([]vt.Row, n)
			for i := range rows {
				var v any = r.Float64() < density
				if withNulls && r.Intn(4) == 0 {
					v = nil
				}
				rows[i] = vt.Row{int64(i), v}
			}
			rec := vt.BuildRecord(mem, flagSchema, rows)
			for off := 0; off < 70; off++ {
				sl := rec.NewSlice(int64(off), int64(n))
				f, err := vector.NewFilter(mem, opsScan(t, sl), vector.Col("flag"))
				sl.Release()
				if err != nil {
					t.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), f)
				if err != nil {
					t.Fatal(err)
				}
				var want []vt.Row
				for _, row := range rows[off:] {
					if row[1] == true {
						want = append(want, row)
					}
				}
				if got := vt.RowsOf(out...); !vt.RowsEqual(want, got) {
					t.Fatalf("density %v nulls %v offset %d: want %d rows, got %d", density, withNulls, off, len(want), len(got))
				}
				for _, o := range out {
					o.Release()
				}
				f.Close()
			}
			rec.Release()
		}
	}
}

func opsScan(t testing.TB, recs ...arrow.Record) *vector.Scan {
	t.Helper()
	s, err := vector.NewScan(recs[0].Schema(), recs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
