package memsink

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkEncodeFile encodes one epoch's file of a string column (the
// cluster scaling test's passthrough rows) at several epoch sizes: small
// epochs show the fixed cost per file, which every instance of a cluster
// pays per epoch (docs/cluster.md, figures).
func BenchmarkEncodeFile(b *testing.B) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.String, Nullable: true}}, nil)
	mem := memory.NewGoAllocator()
	for _, rows := range []int{100, 1000, 10000, 100000} {
		bld := array.NewStringBuilder(mem)
		for i := range rows {
			bld.Append(fmt.Sprintf("e%d", i*7))
		}
		col := bld.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
		col.Release()
		bld.Release()
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				raw, err := encodeFile(mem, schema, fileMeta{Epoch: 1, Prev: 0, Rows: int64(rows), EpochRows: int64(rows)}, []arrow.Record{rec})
				if err != nil {
					b.Fatal(err)
				}
				size = len(raw)
			}
			b.ReportMetric(float64(size)/float64(rows), "bytes/row")
		})
		rec.Release()
	}
}

// stringRecord is a record of rows short strings.
func stringRecord(mem memory.Allocator, rows int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.String, Nullable: true}}, nil)
	bld := array.NewStringBuilder(mem)
	defer bld.Release()
	for i := range rows {
		bld.Append(fmt.Sprintf("e%d", i*7))
	}
	col := bld.NewArray()
	defer col.Release()
	return array.NewRecord(schema, []arrow.Array{col}, int64(rows))
}

// TestEncodeFileSmallEpoch: a small epoch's file costs little memory to
// encode (a zstd encoder per file allocated about 2.3 MB), and files of
// small and large epochs (zstd until session 29) decode to their rows.
func TestEncodeFileSmallEpoch(t *testing.T) {
	mem := memory.NewGoAllocator()
	small := stringRecord(mem, 100)
	defer small.Release()
	m := fileMeta{Epoch: 1, Prev: 0, Base: "1.arrow", Rows: 100, EpochRows: 100}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := encodeFile(mem, small.Schema(), m, []arrow.Record{small}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 256<<10 {
		t.Fatalf("encoding a file of 100 rows allocated %d bytes", per)
	}
	large := stringRecord(mem, 200000)
	defer large.Release()
	for _, rec := range []arrow.Record{small, large} {
		rows := rec.NumRows()
		m := fileMeta{Epoch: 1, Prev: 0, Base: "1.arrow", Rows: rows, EpochRows: rows}
		raw, err := encodeFile(mem, rec.Schema(), m, []arrow.Record{rec})
		if err != nil {
			t.Fatal(err)
		}
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		gotMeta, _, recs, err := decodeFile(checked, raw)
		if err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		n := int64(0)
		for _, r := range recs {
			col := r.Column(0).(*array.String)
			for i := range col.Len() {
				if want := fmt.Sprintf("e%d", (int(n)+i)*7); col.Value(i) != want {
					t.Fatalf("%d rows: row %d is %q, want %q", rows, int(n)+i, col.Value(i), want)
				}
			}
			n += r.NumRows()
			r.Release()
		}
		checked.AssertSize(t, 0)
		if n != rows || gotMeta.Rows != rows {
			t.Fatalf("decoded %d rows (meta %d), want %d", n, gotMeta.Rows, rows)
		}
	}
}
