package files

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowstream/arrowstream/vector"
)

// writeBigPageParquet writes, at path, a Parquet file of one string
// column "s" holding rows random (incompressible) values of size bytes,
// Snappy-compressed, in one row group whose pages are as large as the
// column chunk (a 1 GiB page size limit, no dictionary).
func writeBigPageParquet(t *testing.T, path string, rows, size int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	mem := memory.NewGoAllocator()
	b := array.NewStringBuilder(mem)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, size)
	for range rows {
		for i := range buf {
			buf[i] = 'a' + byte(rng.IntN(26))
		}
		b.Append(string(buf))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	col.Release()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(1<<30), parquet.WithMaxRowGroupLength(int64(rows)))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readParquetFile reads path with a Parquet source on mem, returning the
// rows read or the error.
func readParquetFile(t *testing.T, mem memory.Allocator, path string) (int64, error) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: vector.String, Nullable: true}}, nil)
	s, err := NewSource(mem, schema, Options{Format: Parquet, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.open(context.Background(), path)
	if err != nil {
		return 0, err
	}
	defer op.Close()
	var rows int64
	for {
		rec, err := op.Next(context.Background())
		if isEOF(err) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows += rec.NumRows()
		rec.Release()
	}
}

// TestParquetPagesCounted: a Parquet file whose one page holds 40 MB
// (compressed about as much) is refused under a 16 MiB limit with the
// limit's error naming the file, before the page is read (its compressed
// bytes, measured from the page header, do not fit): the bytes the
// read allocated on the Go heap stay under the limit (reading the column
// chunk whole took it twice, 80 MB, and nothing counted it). Under a
// 256 MiB limit the same file is read whole, and its reservations are
// all returned. The allocator ends at zero either way.
func TestParquetPagesCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pages.parquet")
	writeBigPageParquet(t, path, 40, 1<<20)

	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readParquetFile(t, mem, path)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want the limit's error naming %s", err, path)
	}
	t.Logf("refused read: %d bytes allocated on the Go heap, %d reserved at most", after.TotalAlloc-before.TotalAlloc, mem.peak)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("the refused read allocated %d bytes on the Go heap, more than the 16 MiB limit", got)
	}
	if mem.held != 0 || mem.peak > mem.limit {
		t.Errorf("reserved at most %d (limit %d), %d still held", mem.peak, mem.limit, mem.held)
	}
	mem.AssertSize(t, 0)

	mem = &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 256 << 20}
	n, err := readParquetFile(t, mem, path)
	if err != nil || n != 40 {
		t.Fatalf("read %d rows (%v) under a 256 MiB limit, want 40", n, err)
	}
	if mem.held != 0 || mem.peak < 80<<20 {
		t.Errorf("reserved at most %d bytes for a 40 MB page (want its page and compressed bytes, 80 MB), %d still held", mem.peak, mem.held)
	}
	mem.AssertSize(t, 0)
}
