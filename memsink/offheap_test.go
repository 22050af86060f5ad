package memsink

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// TestCompactionOffHeap: over a pool on Go's allocator (the session's
// allocator), merged records are mapped outside the Go heap, read back
// exactly, and unmapped when the table and its snapshots are released.
func TestCompactionOffHeap(t *testing.T) {
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "e", Type: vector.Int64}, {Name: "s", Type: vector.String}}, nil)
	tbl, err := New(pool, stream.SinkInfo{QueryName: "q", Schema: schema, Mode: stream.Append}, Options{CompactAfter: -1, OffHeap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	const epochs, rows = 500, 20
	for e := range int64(epochs) {
		eb, sb := array.NewInt64Builder(pool), array.NewStringBuilder(pool)
		for i := range rows {
			eb.Append(e)
			sb.Append(fmt.Sprintf("epoch %d row %d", e, i))
		}
		ea, sa := eb.NewArray(), sb.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{ea, sa}, rows)
		ea.Release()
		sa.Release()
		eb.Release()
		sb.Release()
		op, err := vector.NewScan(schema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.AddBatch(context.Background(), e, op); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	oh, ok := tbl.long.(*vector.MappedAllocator)
	if !ok {
		t.Fatalf("long-lived allocator over a Go pool is %T", tbl.long)
	}
	if oh.MappedBytes() < offHeapMin {
		t.Fatalf("merged records not mapped: %d bytes", oh.MappedBytes())
	}
	s := tbl.Snapshot()
	n := 0
	for _, rec := range s.Records() {
		es := rec.Column(0).(*array.Int64).Int64Values()
		ss := rec.Column(1).(*array.String)
		for i := range es {
			if want := fmt.Sprintf("epoch %d row %d", n/rows, n%rows); es[i] != int64(n/rows) || ss.Value(i) != want {
				t.Fatalf("row %d: %d %q, want %q", n, es[i], ss.Value(i), want)
			}
			n++
		}
	}
	if n != epochs*rows {
		t.Fatalf("%d rows", n)
	}
	tbl.Close()
	if oh.MappedBytes() == 0 {
		t.Fatal("unmapped while a snapshot still lists the records")
	}
	s.Release()
	if oh.MappedBytes() != 0 {
		t.Fatalf("%d bytes still mapped after release", oh.MappedBytes())
	}
}
