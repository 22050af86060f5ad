package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
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
