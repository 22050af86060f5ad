package vector_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// tupleAggRows runs GROUP BY c, w, x count(*), sum(x) over recs and returns the
// output rows as sorted strings.
func tupleAggRows(t *testing.T, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) []string {
	t.Helper()
	scan, err := vector.NewScan(schema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := vector.NewHashAggregate(mem, scan, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("c"), "c"), vector.As(vector.Col("w"), "w"), vector.As(vector.Col("x"), "x")},
		Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n"), call(vector.AggSum, "s", "x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	return sortedRowStrings(t, agg)
}

// TestAggregateTupleKeys checks the composite-key shortcut (dictionary,
// window struct and bigint keys read as words) against the same grouping
// of plain strings, which takes the general path: batches sharing a
// dictionary, another dictionary, a dictionary with a repeated value, and
// a batch with a null key in between (general path for that batch only).
func TestAggregateTupleKeys(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dictA := stringArr(mem, "c1", "c2", "c3", "c1") // "c1" twice
	dictB := stringArr(mem, "c3", "c4")
	defer dictA.Release()
	defer dictB.Release()
	rest := arrow.NewSchema([]arrow.Field{{Name: "w", Type: vector.WindowType, Nullable: true}, {Name: "x", Type: vector.Int64, Nullable: true}}, nil)
	type batch struct {
		dict arrow.Array
		idx  []int16
		rows []vt.Row // w, x
	}
	win := func(s int64) []any { return []any{s, s + 10} }
	batches := []batch{
		{dictA, []int16{0, 1, 3, 0, 2}, []vt.Row{{win(0), 1}, {win(0), 1}, {win(0), 1}, {win(10), 1}, {win(0), 2}}},
		{dictA, []int16{3, 3, 1, 2}, []vt.Row{{win(0), 1}, {win(10), 1}, {win(10), 5}, {win(20), 2}}},
		{dictB, []int16{0, 1, 1}, []vt.Row{{win(0), 2}, {win(0), 2}, {win(30), 7}}},
		{dictA, []int16{0, 2}, []vt.Row{{win(0), nil}, {win(0), 2}}},
		{dictA, []int16{0, 0, 1}, []vt.Row{{win(0), 1}, {win(20), 2}, {win(0), 1}}},
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}
	ds := arrow.NewSchema([]arrow.Field{{Name: "c", Type: dictType}, rest.Field(0), rest.Field(1)}, nil)
	ps := arrow.NewSchema([]arrow.Field{{Name: "c", Type: vector.String, Nullable: true}, rest.Field(0), rest.Field(1)}, nil)
	var dictRecs, plainRecs []arrow.Record
	for _, b := range batches {
		r := vt.BuildRecord(mem, rest, b.rows)
		vals := make([]any, len(b.idx))
		for i, x := range b.idx {
			vals[i] = vector.ValueAt(b.dict, int(x))
		}
		dc, pc := dictColumn(mem, b.dict, b.idx), stringArr(mem, vals...)
		n := int64(len(b.idx))
		dictRecs = append(dictRecs, array.NewRecord(ds, []arrow.Array{dc, r.Column(0), r.Column(1)}, n))
		plainRecs = append(plainRecs, array.NewRecord(ps, []arrow.Array{pc, r.Column(0), r.Column(1)}, n))
		dc.Release()
		pc.Release()
		r.Release()
	}
	defer func() {
		for i := range dictRecs {
			dictRecs[i].Release()
			plainRecs[i].Release()
		}
	}()
	got := tupleAggRows(t, mem, ds, dictRecs)
	want := tupleAggRows(t, mem, ps, plainRecs)
	if !slices.Equal(got, want) {
		t.Fatalf("dictionary keys:\n%v\nplain keys:\n%v", got, want)
	}
	if len(want) < 8 {
		t.Fatalf("only %d groups: the test checks little", len(want))
	}
}
