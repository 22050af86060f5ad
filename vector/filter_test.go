package vector_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The comparison and arithmetic kernels live in another part of the
// package; these two test-only expressions stand in for them so that the
// operator tests and benchmarks depend only on the operators.

// gtConst is `col > c` over a bigint column.
type gtConst struct {
	col string
	c   int64
}

func (g gtConst) String() string { return fmt.Sprintf("(%s > %d)", g.col, g.c) }

func (g gtConst) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	ev, err := vector.Col(g.col).Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if ev.DataType().ID() != arrow.INT64 {
		return nil, fmt.Errorf("gtConst over %s", ev.DataType())
	}
	return gtEval{col: ev, c: g.c, mem: mem}, nil
}

type gtEval struct {
	col vector.Evaluator
	c   int64
	mem memory.Allocator
}

func (gtEval) DataType() arrow.DataType { return vector.Boolean }

func (g gtEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := g.col.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	vals := a.(*array.Int64).Int64Values()
	n := len(vals)
	buf := memory.NewResizableBuffer(g.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	full := n &^ 7
	for i := 0; i < full; i += 8 {
		v := (*[8]int64)(vals[i : i+8])
		c := g.c
		out[i>>3] = opsBit(v[0] > c) | opsBit(v[1] > c)<<1 | opsBit(v[2] > c)<<2 | opsBit(v[3] > c)<<3 |
			opsBit(v[4] > c)<<4 | opsBit(v[5] > c)<<5 | opsBit(v[6] > c)<<6 | opsBit(v[7] > c)<<7
	}
	if full < n {
		var b byte
		for j, x := range vals[full:] {
			b |= opsBit(x > g.c) << j
		}
		out[full>>3] = b
	}
	return opsBoolResult(g.mem, a, buf), nil
}

// opsBit converts a comparison to 0 or 1; the compiler emits SETcc for it, so
// the predicate has no data-dependent branch.
func opsBit(b bool) byte {
	var x byte
	if b {
		x = 1
	}
	return x
}

// mulConst is `col * c` over a double column.
type mulConst struct {
	col string
	c   float64
}

func (m mulConst) String() string { return fmt.Sprintf("(%s * %v)", m.col, m.c) }

func (m mulConst) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	ev, err := vector.Col(m.col).Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if ev.DataType().ID() != arrow.FLOAT64 {
		return nil, fmt.Errorf("mulConst over %s", ev.DataType())
	}
	return mulEval{col: ev, c: m.c, mem: mem}, nil
}

type mulEval struct {
	col vector.Evaluator
	c   float64
	mem memory.Allocator
}

func (mulEval) DataType() arrow.DataType { return vector.Float64 }

func (m mulEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := m.col.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	vals := a.(*array.Float64).Float64Values()
	buf := memory.NewResizableBuffer(m.mem)
	buf.Resize(len(vals) * 8)
	out := arrow.Float64Traits.CastFromBytes(buf.Bytes())[:len(vals)]
	for i, v := range vals {
		out[i] = v * m.c
	}
	validity, nulls := opsCopyValidity(m.mem, a)
	d := array.NewData(vector.Float64, len(vals), []*memory.Buffer{validity, buf}, nil, nulls, 0)
	buf.Release()
	if validity != nil {
		validity.Release()
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

func opsBoolResult(mem memory.Allocator, in arrow.Array, vals *memory.Buffer) arrow.Array {
	validity, nulls := opsCopyValidity(mem, in)
	d := array.NewData(vector.Boolean, in.Len(), []*memory.Buffer{validity, vals}, nil, nulls, 0)
	vals.Release()
	if validity != nil {
		validity.Release()
	}
	defer d.Release()
	return array.MakeFromData(d)
}

// opsCopyValidity copies in's validity bitmap to offset 0, or returns nil.
func opsCopyValidity(mem memory.Allocator, in arrow.Array) (*memory.Buffer, int) {
	if in.NullN() == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(in.Len()))))
	bitutil.CopyBitmap(in.NullBitmapBytes(), in.Data().Offset(), in.Len(), buf.Bytes(), 0)
	return buf, in.NullN()
}

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
		{Name: "gt", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(gtConst{"a", 2}),
			Want: []vt.Row{abRows[1], abRows[3], abRows[4]}, Ordered: true, WantSchema: abSchema},
		{Name: "bool-column-with-nulls", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Col("flag")),
			Want: []vt.Row{abRows[0], abRows[2], abRows[4]}, Ordered: true},
		{Name: "all-filtered", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(gtConst{"a", 100})},
		{Name: "all-pass", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows[:2]}}, Build: filterBy(gtConst{"a", -100}),
			Want: abRows[:2], Ordered: true},
		{Name: "true", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(true)),
			Want: abRows, Ordered: true},
		{Name: "false", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(false))},
		{Name: "null", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.Lit(nil))},
		{Name: "null-boolean", Inputs: []vt.Input{{Schema: abSchema, Rows: abRows}}, Build: filterBy(vector.TypedLit(vector.Boolean, nil))},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: abSchema}}, Build: filterBy(gtConst{"a", 2})},
		{Name: "patterns", Inputs: []vt.Input{{Schema: flagSchema, Rows: patRows}}, Build: filterBy(vector.Col("flag")),
			Want: patWant, Ordered: true},
		{Name: "struct-column", Inputs: []vt.Input{{Schema: windowSchema, Rows: windowRows}}, Build: filterBy(gtConst{"id", 2}),
			Want: windowRows[2:], Ordered: true},
		{Name: "list-column", Inputs: []vt.Input{{Schema: listSchema, Rows: listRows}}, Build: filterBy(gtConst{"id", 1}),
			Want: []vt.Row{listRows[1], listRows[2], listRows[3]}, Ordered: true},
		{Name: "dictionary-column", Inputs: []vt.Input{{Schema: dictSchema, Rows: dictRows}}, Build: filterBy(gtConst{"i", 0}),
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
