package vector_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// nestedRecord is a record with a sliced string column with nulls, a
// list of int64, a struct, and a dictionary-encoded string column, on mem.
func nestedRecord(t testing.TB, mem memory.Allocator) arrow.Record {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}), Nullable: true},
		{Name: "d", Type: dictType, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range 100 {
		if i%7 == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(strings.Repeat("x", i))
		}
		lb := b.Field(1).(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 4 {
			lb.ValueBuilder().(*array.Int64Builder).Append(int64(i * j))
		}
		sb := b.Field(2).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(-i))
		if err := b.Field(3).(*array.BinaryDictionaryBuilder).AppendString([]string{"a", "b", "c"}[i%3]); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return rec.NewSlice(3, 90)
}

// TestViewRecord: a view has the record's values (nested and dictionary
// columns, a slice's offset), takes no reference on its buffers, and may
// be released (or dropped) in any order with the record: the checked
// allocator ends at zero once the record alone is released.
func TestViewRecord(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := nestedRecord(t, mem)
	held := mem.CurrentAlloc()
	view := vector.ViewRecord(rec)
	if got := mem.CurrentAlloc(); got != held {
		t.Fatalf("the view allocated %d bytes on the record's allocator", got-held)
	}
	if !array.RecordEqual(rec, view) {
		t.Fatalf("view differs from the record:\n%v\n%v", view, rec)
	}
	view.Retain()
	view.Release()
	rec.Release()
	if got := mem.CurrentAlloc(); got != 0 {
		t.Fatalf("%d bytes left after the record's release: the view holds a reference", got)
	}
	view.Release() // the view's own structures only
	// A view never released leaks nothing of the allocator either.
	rec2 := nestedRecord(t, mem)
	_ = vector.ViewRecord(rec2)
	rec2.Release()
}

// recordBorrower keeps what it borrows and hands out views.
type recordBorrower struct {
	memory.Allocator
	kept []arrow.Record
}

func (b *recordBorrower) Borrow(rec arrow.Record) arrow.Record {
	b.kept = append(b.kept, rec)
	return vector.ViewRecord(rec)
}

// TestBorrowScan: a scan over a RecordBorrower returns views and leaves
// the records with the borrower; over a plain allocator it is the scan.
func TestBorrowScan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := nestedRecord(t, mem)
	defer rec.Release()
	scan, err := vector.NewScan(rec.Schema(), rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	if op := vector.BorrowScan(mem, scan); op != vector.Operator(scan) {
		t.Fatalf("BorrowScan over a plain allocator wrapped the scan")
	}
	b := &recordBorrower{Allocator: mem}
	op := vector.BorrowScan(b, scan)
	for {
		out, err := op.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !array.RecordEqual(out, rec) {
			t.Fatal("borrowed view differs from the record")
		}
		// Dropped without a release, as an unwound operator would.
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	if len(b.kept) != 2 {
		t.Fatalf("borrower kept %d records, want 2", len(b.kept))
	}
	for _, r := range b.kept {
		r.Release()
	}
}

// BenchmarkViewRecord is the per-batch cost a batch query's table scan
// pays for borrowing (one view per batch, not per row).
func BenchmarkViewRecord(b *testing.B) {
	rec := nestedRecord(b, memory.NewGoAllocator())
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		vector.ViewRecord(rec).Release()
	}
}
