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

// TestOffHeapAllocator: large buffers are mapped (zeroed, growable in
// place within the mapping, contents kept when they move), small ones come
// from the fallback, and every mapping is gone once freed.
func TestOffHeapAllocator(t *testing.T) {
	fb := memory.NewCheckedAllocator(memory.NewGoAllocator())
	a := newOffHeap(fb)
	small := a.Allocate(100)
	if a.Mapped() != 0 || fb.CurrentAlloc() != 100 {
		t.Fatalf("small buffer: mapped %d, fallback %d", a.Mapped(), fb.CurrentAlloc())
	}
	big := a.Allocate(minMapped + 1)
	if a.Mapped() < minMapped+1 || len(big) != minMapped+1 {
		t.Fatalf("big buffer: mapped %d, len %d", a.Mapped(), len(big))
	}
	for i := range big {
		if big[i] != 0 {
			t.Fatalf("byte %d not zeroed", i)
		}
		big[i] = byte(i)
	}
	same := a.Reallocate(minMapped+2, big) // within the mapping's last page
	if &same[0] != &big[0] || same[minMapped+1] != 0 {
		t.Fatal("growth within the mapping moved or left garbage")
	}
	moved := a.Reallocate(4*minMapped, same)
	for i := range minMapped + 1 {
		if moved[i] != byte(i) {
			t.Fatalf("byte %d lost when the buffer moved", i)
		}
	}
	grown := a.Reallocate(2*minMapped, small) // small → mapped
	a.Free(moved)
	a.Free(grown)
	if a.Mapped() != 0 || fb.CurrentAlloc() != 0 || len(a.mapped) != 0 {
		t.Fatalf("after freeing: mapped %d, fallback %d, %d mappings", a.Mapped(), fb.CurrentAlloc(), len(a.mapped))
	}
}

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
	oh, ok := tbl.long.(*offHeap)
	if !ok {
		t.Fatalf("long-lived allocator over a Go pool is %T", tbl.long)
	}
	if oh.Mapped() < minMapped {
		t.Fatalf("merged records not mapped: %d bytes", oh.Mapped())
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
	if oh.Mapped() == 0 {
		t.Fatal("unmapped while a snapshot still lists the records")
	}
	s.Release()
	if oh.Mapped() != 0 {
		t.Fatalf("%d bytes still mapped after release", oh.Mapped())
	}
}
