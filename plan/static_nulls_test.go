package plan

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStaticTablesSettleNullCounts: a static table's records are read by
// concurrent queries, so what a table keeps (registered records, inserted
// ones, an overwrite) has its null counts known; a slice handed in starts
// with them unknown, and the first two readers would both store them.
func TestStaticTablesSettleNullCounts(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 0, 3, 0, 5, 6}, []bool{true, false, true, false, true, true})
	col := b.NewArray()
	b.Release()
	whole := array.NewRecord(schema, []arrow.Array{col}, 6)
	col.Release()
	defer whole.Release()
	slice := func() arrow.Record {
		s := whole.NewSlice(1, 5)
		if s.Column(0).Data().NullN() >= 0 {
			t.Fatal("the test wants a slice whose null count is not known yet")
		}
		return s
	}
	check := func(what string, recs []arrow.Record) {
		for i, r := range recs {
			if n := r.Column(0).Data().NullN(); n != 2 {
				t.Errorf("%s: record %d keeps null count %d, want 2", what, i, n)
			}
		}
	}
	r1 := slice()
	mt, err := NewMemTable(schema, r1)
	r1.Release()
	if err != nil {
		t.Fatal(err)
	}
	check("NewMemTable", mt.records)
	mt.Release()

	st := NewStaticTable(schema)
	r2 := slice()
	if err := st.Append(r2); err != nil {
		t.Fatal(err)
	}
	r2.Release()
	check("Append", st.records)
	r3 := slice()
	if err := st.Overwrite(r3); err != nil {
		t.Fatal(err)
	}
	r3.Release()
	check("Overwrite", st.records)
	st.Release()
}
