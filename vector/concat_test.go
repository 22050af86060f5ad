package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	"github.com/arrowstream/arrowstream/vector/vectortest"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestConcatRecords(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64},
		{Name: "s", Type: vector.String, Nullable: true},
	}, nil)
	rows := []vt.Row{{1, "a"}, {2, nil}, {3, "c"}, {4, "d"}, {5, nil}}
	for _, shape := range vt.Shapes {
		t.Run(shape.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			recs := vt.BuildRecords(mem, schema, rows, shape)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			out, err := vector.ConcatRecords(mem, schema, recs)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if !out.Schema().Equal(schema) {
				t.Fatalf("schema %s", out.Schema())
			}
			if got := vt.RowsOf(out); !vt.RowsEqual(rows, got) {
				t.Fatalf("rows:\n%swant:\n%s", vt.FormatRows(got), vt.FormatRows(rows))
			}
			if len(recs) == 1 && out != recs[0] {
				t.Error("a single record was copied")
			}
		})
	}
}

func TestConcatRecordsNone(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}}, nil)
	out, err := vector.ConcatRecords(mem, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NumRows() != 0 || out.NumCols() != 1 || !out.Schema().Equal(schema) {
		t.Fatalf("no records gave %d rows, %d columns, schema %s", out.NumRows(), out.NumCols(), out.Schema())
	}
}

// BenchmarkConcatRecords concatenates 16 records of 4K rows (an int64 and
// a string column), what a sort or a hash join's build side does with its
// buffered input; it reports rows/s.
func BenchmarkConcatRecords(b *testing.B) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64},
		{Name: "s", Type: vector.String, Nullable: true},
	}, nil)
	rows := make([]vt.Row, 16<<12)
	for i := range rows {
		rows[i] = vt.Row{int64(i), "value"}
	}
	mem := memory.NewGoAllocator()
	recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: 1 << 12})
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	pool := vector.NewPoolAllocator(mem, 0)
	defer pool.Close()
	b.ResetTimer()
	for range b.N {
		out, err := vector.ConcatRecords(pool, schema, recs)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

var dictStrType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// buildDict builds a dictionary-encoded string array with its own
// dictionary (nil is a null).
func buildDict(t *testing.T, mem memory.Allocator, vals ...any) arrow.Array {
	t.Helper()
	b := array.NewDictionaryBuilder(mem, dictStrType).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		if err := b.AppendString(v.(string)); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewArray()
}

// Found by the differential tester (seed 1143): arrow-go's Concatenate of
// dictionary arrays with different dictionaries and nulls overwrote
// earlier indices with 0, so a sorted column read its first dictionary
// value on rows that held others.
func TestConcatenateDictionariesWithNulls(t *testing.T) {
	mem := vectortest.NewAllocator(t)
	a := buildDict(t, mem, "é", nil, "x", "y", nil, "z")
	defer a.Release()
	b := buildDict(t, mem, "1", "long", nil, "x", "true", nil, "é")
	defer b.Release()
	c := buildDict(t, mem, nil, "q")
	defer c.Release()
	got, err := vector.Concatenate([]arrow.Array{a, b, c}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := []any{"é", nil, "x", "y", nil, "z", "1", "long", nil, "x", "true", nil, "é", nil, "q"}
	if got.Len() != len(want) {
		t.Fatalf("got %d rows, want %d", got.Len(), len(want))
	}
	for i, w := range want {
		if v := vector.ValueAt(got, i); v != w {
			t.Errorf("row %d: got %v, want %v", i, v, w)
		}
	}
}

// The same through the sort operator, which concatenates its input
// batches.
func TestSortDictionaryBatchesWithNulls(t *testing.T) {
	mem := vectortest.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: dictStrType, Nullable: true}}, nil)
	var recs []arrow.Record
	for _, vals := range [][]any{{"é", nil, "b"}, {"1", nil, "long", "x", nil, "true"}} {
		arr := buildDict(t, mem, vals...)
		recs = append(recs, array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len())))
		arr.Release()
	}
	feed := vectortest.NewFeed(schema, recs...)
	for _, r := range recs {
		r.Release()
	}
	s, err := vector.NewSort(mem, feed, []vector.SortKey{vector.Asc(vector.Col("s"))})
	if err != nil {
		t.Fatal(err)
	}
	out, err := vector.Drain(context.Background(), s)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, r := range out {
		got = append(got, vectortest.ValuesOf(r.Column(0))...)
		r.Release()
	}
	want := []any{nil, nil, nil, "1", "b", "long", "true", "x", "é"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
