package vector

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestOwnedScan checks that an owned scan hands records on without an
// extra reference, skips empty ones, and releases the unread ones on Close
// (the checked allocator ends at zero only if every reference is dropped
// exactly once).
func TestOwnedScan(t *testing.T) {
	for _, read := range []int{0, 1, 2, 3} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
		mk := func(vals ...int64) arrow.Record {
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.AppendValues(vals, nil)
			col := b.NewArray()
			defer col.Release()
			return array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
		}
		recs := []arrow.Record{mk(1, 2), mk(), mk(3), mk(4, 5, 6)}
		scan := NewOwnedScan(schema, recs)
		var rows []int64
		for i := 0; i < read; i++ {
			rec, err := scan.Next(context.Background())
			if err != nil {
				t.Fatalf("read %d: record %d: %v", read, i, err)
			}
			rows = append(rows, rec.NumRows())
			rec.Release()
		}
		if read == 3 {
			if _, err := scan.Next(context.Background()); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last record: %v, want io.EOF", err)
			}
		}
		want := []int64{2, 1, 3}[:read]
		for i := range want {
			if rows[i] != want[i] {
				t.Fatalf("read %d: record sizes %v, want %v", read, rows, want)
			}
		}
		scan.Close()
		scan.Close() // idempotent
		mem.AssertSize(t, 0)
	}
}

func TestReleaseRecordsSkipsNil(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := array.NewInt64Builder(mem)
	b.Append(1)
	col := b.NewArray()
	b.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, 1)
	col.Release()
	ReleaseRecords([]arrow.Record{nil, rec, nil})
	mem.AssertSize(t, 0)
}
