package server

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestBorrowOwnedAndTable: a query's allocator passes on a record it
// allocated itself and borrows one it did not (a view handed out, the
// record kept until releaseBorrowed); an allocator that does not borrow
// passes both on.
func TestBorrowOwnedAndTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	build := func(alloc memory.Allocator) arrow.Record {
		b := array.NewInt64Builder(alloc)
		defer b.Release()
		b.AppendValues([]int64{1, 2, 3}, nil)
		col := b.NewArray()
		defer col.Release()
		return array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, 3)
	}
	a := newQueryAllocator(mem, 0)
	a.borrows = true
	own := build(a)
	if got := a.Borrow(own); got != own {
		t.Fatal("the query's own record was borrowed")
	}
	own.Release()
	table := build(mem)
	table.Retain() // the scan's reference, given to Borrow
	view := a.Borrow(table)
	if view == table || !array.RecordEqual(view, table) {
		t.Fatal("a table's record was not replaced by a view of it")
	}
	table.Release() // the table drops its record: the query still holds it
	if mem.CurrentAlloc() == 0 {
		t.Fatal("the borrowed record was freed while the query runs")
	}
	if n := a.releaseBorrowed(); n != 1 {
		t.Fatalf("released %d borrowed records, want 1", n)
	}
	view.Release()
	c := newQueryAllocator(mem, 0)
	rec := build(mem)
	if got := c.Borrow(rec); got != rec {
		t.Fatal("an allocator that does not borrow borrowed")
	}
	rec.Release()
}

// BenchmarkBorrowScan reads a 2M-row table (32 records of a bigint and a
// string column) through a query allocator's scan, with and without
// borrowing, so the cost of the views is measured against the plain scan
// in one run.
func BenchmarkBorrowScan(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	var recs []arrow.Record
	for r := range 32 {
		rb := array.NewRecordBuilder(mem, schema)
		for i := range 64 << 10 {
			rb.Field(0).(*array.Int64Builder).Append(int64(r*65536 + i))
			rb.Field(1).(*array.StringBuilder).Append("some string value")
		}
		recs = append(recs, rb.NewRecord())
		rb.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	ctx := context.Background()
	for _, borrows := range []bool{false, true} {
		b.Run(fmt.Sprintf("borrows=%v", borrows), func(b *testing.B) {
			for b.Loop() {
				a := newQueryAllocator(mem, 0)
				a.borrows = borrows
				scan, err := vector.NewScan(schema, recs...)
				if err != nil {
					b.Fatal(err)
				}
				op := vector.BorrowScan(a, scan)
				var sum int64
				for {
					rec, err := op.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
						sum += v
					}
					rec.Release()
				}
				op.Close()
				a.releaseBorrowed()
			}
		})
	}
}
