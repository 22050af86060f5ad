package vector_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var selTreeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: vector.Int32, Nullable: true},
	{Name: "l", Type: vector.Int64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "ts", Type: vector.Timestamp, Nullable: true},
	{Name: "f", Type: vector.Float64, Nullable: true},
}, nil)

// selTreeStrings are the string column's values and constants: empty,
// short (the kernel's word path) and longer than a word.
var selTreeStrings = []string{"", "OR", "CA", "ID", "ORE", "a-string-past-eight", "a-string-past-eighT"}

func selTreeRows(r *rand.Rand, n int) []vt.Row {
	rows := make([]vt.Row, n)
	for k := range rows {
		row := vt.Row{int32(r.Intn(10) - 5), int64(r.Intn(10) - 5), selTreeStrings[r.Intn(len(selTreeStrings))],
			arrow.Timestamp(r.Intn(10) - 5), r.Float64()*4 - 2}
		for c := range row {
			if r.Intn(5) == 0 {
				row[c] = nil
			}
		}
		rows[k] = row
	}
	return rows
}

// selTreePred is a random condition over selTreeSchema of the given depth:
// comparisons with constants, IS [NOT] NULL, AND and OR, and now and then
// a part the mask-free selection does not serve (a float comparison, NOT),
// which sends the whole condition down the mask path.
func selTreePred(r *rand.Rand, depth int) vector.Expr {
	if depth > 0 && r.Intn(4) != 0 {
		l, rt := selTreePred(r, depth-1), selTreePred(r, depth-1)
		if r.Intn(2) == 0 {
			return vector.And(l, rt)
		}
		return vector.Or(l, rt)
	}
	cmps := []func(l, r vector.Expr) vector.Expr{vector.Eq, vector.NotEq, vector.Lt, vector.Le, vector.Gt, vector.Ge}
	cmp := cmps[r.Intn(len(cmps))]
	switch r.Intn(12) {
	case 0, 1:
		return cmp(vector.Col("i"), vector.Lit(r.Intn(10)-5))
	case 2:
		return cmp(vector.Lit(int64(r.Intn(10)-5)), vector.Col("l"))
	case 3:
		return cmp(vector.Col("ts"), vector.Lit(arrow.Timestamp(r.Intn(10)-5)))
	case 4, 5, 6:
		c := selTreeStrings[r.Intn(len(selTreeStrings))]
		if r.Intn(3) == 0 {
			return vector.NotEq(vector.Lit(c), vector.Col("s"))
		}
		return vector.Eq(vector.Col("s"), vector.Lit(c))
	case 7, 8:
		col := []string{"i", "l", "s", "ts", "f"}[r.Intn(5)]
		if r.Intn(2) == 0 {
			return vector.IsNull(vector.Col(col))
		}
		return vector.IsNotNull(vector.Col(col))
	case 9:
		return cmp(vector.Col("s"), vector.Lit("OR")) // ordering: mask path
	case 10:
		return vector.Gt(vector.Col("f"), vector.Lit(0.5)) // float: mask path
	default:
		return vector.Not(vector.Eq(vector.Col("i"), vector.Lit(0))) // NOT: mask path
	}
}

// TestFilterSelectionTreeMatchesMask runs random conditions through
// Filter (the mask-free selection where it serves them) and through the
// general path (the condition hidden from Filter, so evaluated as a
// mask), in every batch layout (offsets, garbage under nulls, bitmaps
// without nulls, empty batches), through Filter.Next and through Project's
// selection path.
func TestFilterSelectionTreeMatchesMask(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	rows := selTreeRows(r, 400) // one batch of 400 in the 1024 layouts: under selTreeMaxRows
	fixed := []vector.Expr{
		// q3's persons and auctions, and q8's sides.
		vector.And(vector.Or(vector.Or(vector.Eq(vector.Col("s"), vector.Lit("OR")), vector.Eq(vector.Col("s"), vector.Lit("ID"))),
			vector.Eq(vector.Col("s"), vector.Lit("CA"))), vector.IsNotNull(vector.Col("l"))),
		vector.And(vector.Eq(vector.Col("i"), vector.Lit(3)), vector.IsNotNull(vector.Col("l"))),
		vector.IsNotNull(vector.Col("l")),
		vector.IsNull(vector.Col("s")),
		vector.Or(vector.IsNull(vector.Col("s")), vector.NotEq(vector.Col("s"), vector.Lit(""))),
		vector.And(vector.Or(vector.Lt(vector.Col("l"), vector.Lit(int64(0))), vector.Eq(vector.Col("s"), vector.Lit("a-string-past-eight"))),
			vector.Or(vector.IsNull(vector.Col("i")), vector.Ge(vector.Col("ts"), vector.Lit(arrow.Timestamp(2))))),
	}
	preds := fixed
	for range 40 {
		preds = append(preds, selTreePred(r, 3))
	}
	for k, pred := range preds {
		want := filterRows(t, opaque{pred}, rows)
		p := pred
		for _, proj := range []bool{false, true} {
			vt.RunOperator(t, vt.OperatorCase{
				Name:   fmt.Sprintf("%d/project=%v/%s", k, proj, p),
				Inputs: []vt.Input{{Schema: selTreeSchema, Rows: rows}},
				Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
					f, err := vector.NewFilter(mem, in[0], p)
					if err != nil || !proj {
						return f, err
					}
					return vector.NewProject(mem, f, []vector.NamedExpr{
						vector.As(vector.Col("i"), "i"), vector.As(vector.Col("l"), "l"), vector.As(vector.Col("s"), "s"),
						vector.As(vector.Col("ts"), "ts"), vector.As(vector.Col("f"), "f")})
				},
				Want:    want,
				Ordered: true,
			})
		}
	}
}

// filterRows is the rows of rows that pred keeps, through one Filter.
func filterRows(t *testing.T, pred vector.Expr, rows []vt.Row) []vt.Row {
	t.Helper()
	mem := vt.NewAllocator(t)
	recs := vt.BuildRecords(mem, selTreeSchema, rows, vt.Shape{})
	scan, _ := vector.NewScan(selTreeSchema, recs...)
	recs[0].Release()
	f, err := vector.NewFilter(mem, scan, pred)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := vector.Drain(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	got := vt.RowsOf(out...)
	for _, o := range out {
		o.Release()
	}
	return got
}

// countingAllocator counts the allocations it passes on.
type countingAllocator struct {
	memory.Allocator
	n atomic.Int64
}

func (c *countingAllocator) Allocate(size int) []byte {
	c.n.Add(1)
	return c.Allocator.Allocate(size)
}

// TestFilterConjunctionAllocatesNoMask: a conjunction and disjunction of
// served conditions (q3's persons: state = 'OR' OR state = 'ID' OR state
// = 'CA', AND id IS NOT NULL) selects without allocating a boolean
// column per operand; when every row passes, the batch goes on as it is
// and the filter allocates nothing at all.
func TestFilterConjunctionAllocatesNoMask(t *testing.T) {
	mem := vt.NewAllocator(t)
	rows := make([]vt.Row, 500) // under selTreeMaxRows
	for k := range rows {
		rows[k] = vt.Row{int32(k % 7), int64(k), selTreeStrings[1+k%3], arrow.Timestamp(k), 0.5}
	}
	rec := vt.BuildRecord(mem, selTreeSchema, rows)
	defer rec.Release()
	preds := []vector.Expr{
		vector.And(vector.Or(vector.Or(vector.Eq(vector.Col("s"), vector.Lit("OR")), vector.Eq(vector.Col("s"), vector.Lit("ID"))),
			vector.Eq(vector.Col("s"), vector.Lit("CA"))), vector.IsNotNull(vector.Col("l"))),
		vector.IsNotNull(vector.Col("l")),
		vector.And(vector.Ge(vector.Col("l"), vector.Lit(int64(0))), vector.IsNotNull(vector.Col("f"))),
	}
	for _, pred := range preds {
		counting := &countingAllocator{Allocator: mem}
		f, err := vector.NewFilter(counting, &opsRepeat{rec: rec, left: 20}, pred)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			out, err := f.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if out.NumRows() != rec.NumRows() {
				t.Fatalf("%s: %d rows of %d passed, want all", pred, out.NumRows(), rec.NumRows())
			}
			out.Release()
		}
		f.Close()
		if n := counting.n.Load(); n != 0 {
			t.Errorf("%s: 20 batches made %d allocations, want 0 (no masks)", pred, n)
		}
	}
}

var selTreeRowsFlag = flag.Int("filter.rows", 256, "BenchmarkFilterSelectionTree's batch rows (over 512: the masks for both)")

// BenchmarkFilterSelectionTree filters batches of 256 rows (-filter.rows) by q3's persons'
// condition (three string equalities ORed, AND a non-null id; about half
// the rows pass, or all of them in "all/": then no gather follows and the
// figure is the selection's alone), selected without masks and, hidden
// from Filter, through the masks.
func BenchmarkFilterSelectionTree(b *testing.B) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewSource(1))
	rows := make([]vt.Row, *selTreeRowsFlag)
	states := []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	for k := range rows {
		rows[k] = vt.Row{int32(k), int64(k), states[r.Intn(len(states))], arrow.Timestamp(k), 0.5}
	}
	half := vt.BuildRecord(mem, selTreeSchema, rows)
	defer half.Release()
	for k := range rows {
		rows[k][2] = states[1+r.Intn(3)]
	}
	all := vt.BuildRecord(mem, selTreeSchema, rows)
	defer all.Release()
	pred := vector.And(vector.Or(vector.Or(vector.Eq(vector.Col("s"), vector.Lit("OR")), vector.Eq(vector.Col("s"), vector.Lit("ID"))),
		vector.Eq(vector.Col("s"), vector.Lit("CA"))), vector.IsNotNull(vector.Col("l")))
	for _, c := range []struct {
		name string
		rec  arrow.Record
		pred vector.Expr
	}{{"half/select", half, pred}, {"half/mask", half, opaque{pred}}, {"all/select", all, pred}, {"all/mask", all, opaque{pred}}} {
		b.Run(c.name, func(b *testing.B) {
			rec := c.rec
			f, err := vector.NewFilter(mem, &opsRepeat{rec: rec, left: b.N}, c.pred)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(int64(len(rows)))
			b.ResetTimer()
			opsDrain(b, f)
		})
	}
}
