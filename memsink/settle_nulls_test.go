package memsink_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// nullableRecord builds a (k bigint, s string) record of n rows in which
// every seventh k and every fifth s is null.
func nullableRecord(mem memory.Allocator, schema *arrow.Schema, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	kb, sb := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.StringBuilder)
	for i := 0; i < n; i++ {
		if i%7 == 3 {
			kb.AppendNull()
		} else {
			kb.Append(int64(i))
		}
		if i%5 == 1 {
			sb.AppendNull()
		} else {
			sb.Append("v")
		}
	}
	return b.NewRecord()
}

// TestStoredRecordsHaveKnownNullCounts: every record a table keeps has
// the null counts of its columns known, also where the table keeps a
// slice (a long epoch split into MaxRecordRows pieces, a slice handed in
// by the query, a compaction's pieces). Arrow computes an unknown count on
// first use and stores it in the shared array data, so two Flight readers
// serving the same snapshot at once (each IPC writer asks for the counts)
// would race on it; TestConcurrentReadersShareRecords is that case under
// -race.
func TestStoredRecordsHaveKnownNullCounts(t *testing.T) {
	for _, mode := range []arrowstream.OutputMode{arrowstream.Append, arrowstream.Update} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			tbl, schema := nullableTable(t, mem, mode)
			addNullableEpochs(t, mem, tbl, schema)
			s := tbl.Snapshot()
			defer s.Release()
			if len(s.Records()) < 4 {
				t.Fatalf("%d records; the test wants the long epoch split", len(s.Records()))
			}
			for i, rec := range s.Records() {
				for c, col := range rec.Columns() {
					if n := col.Data().NullN(); n < 0 {
						t.Errorf("record %d column %d: null count unknown (%d) in the stored data", i, c, n)
					}
				}
			}
		})
	}
}

// TestConcurrentReadersShareRecords reads one snapshot's records from
// several goroutines at once, as concurrent DoGet streams do.
func TestConcurrentReadersShareRecords(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl, schema := nullableTable(t, mem, arrowstream.Append)
	addNullableEpochs(t, mem, tbl, schema)
	s := tbl.Snapshot()
	defer s.Release()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(s.Schema()))
			defer w.Close()
			for _, rec := range s.Records() {
				if err := w.Write(rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func nullableTable(t *testing.T, mem memory.Allocator, mode arrowstream.OutputMode) (*memsink.Table, *arrow.Schema) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}, {Name: "s", Type: vector.String, Nullable: true}}, nil)
	info := arrowstream.SinkInfo{Mode: mode, Schema: schema}
	return newTable(t, mem, info, memsink.Options{}), schema
}

// addNullableEpochs adds a long epoch (split by the table) and an epoch
// that is a slice of a longer record.
func addNullableEpochs(t *testing.T, mem memory.Allocator, tbl *memsink.Table, schema *arrow.Schema) {
	t.Helper()
	long := nullableRecord(mem, schema, 3*memsink.MaxRecordRows+5)
	defer long.Release()
	whole := nullableRecord(mem, schema, 100)
	defer whole.Release()
	part := whole.NewSlice(3, 90)
	defer part.Release()
	for epoch, rec := range []arrow.Record{long, part} {
		scan, err := vector.NewScan(schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.AddBatch(context.Background(), int64(epoch), scan); err != nil {
			t.Fatal(err)
		}
	}
}
