package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// writeColumnsParquet writes, at path, a Parquet file of cols string
// columns c0, c1, … of rows values each made by value(col, row), with
// props.
func writeColumnsParquet(t testing.TB, path string, cols, rows int, value func(col, row int) string, props *parquet.WriterProperties) {
	t.Helper()
	fields := make([]arrow.Field, cols)
	for c := range fields {
		fields[c] = arrow.Field{Name: fmt.Sprintf("c%d", c), Type: arrow.BinaryTypes.String, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	mem := memory.NewGoAllocator()
	arrs := make([]arrow.Array, cols)
	for c := range arrs {
		b := array.NewStringBuilder(mem)
		for r := range rows {
			b.Append(value(c, r))
		}
		arrs[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(schema, arrs, int64(rows))
	for _, a := range arrs {
		a.Release()
	}
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPageHeadersAccountForChunks: over files written with random
// settings (page versions and sizes, dictionaries, statistics, codecs,
// row groups), the page headers read walk every column chunk exactly:
// each chunk's headers and compressed pages add up to the chunk's
// total_compressed_size, and the largest compressed page is no larger
// than the chunk.
func TestPageHeadersAccountForChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	codecs := []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Gzip}
	for trial := range 24 {
		path := filepath.Join(t.TempDir(), "t.parquet")
		version := parquet.DataPageV1
		if rng.IntN(2) == 1 {
			version = parquet.DataPageV2
		}
		props := parquet.NewWriterProperties(
			parquet.WithCompression(codecs[rng.IntN(len(codecs))]),
			parquet.WithDictionaryDefault(rng.IntN(2) == 1),
			parquet.WithStats(rng.IntN(2) == 1),
			parquet.WithDataPageVersion(version),
			parquet.WithDataPageSize(int64(1<<10+rng.IntN(64<<10))),
			parquet.WithMaxRowGroupLength(int64(500+rng.IntN(5000))),
		)
		rows := 1 + rng.IntN(20000)
		distinct := 1 + rng.IntN(1000)
		writeColumnsParquet(t, path, 1+rng.IntN(3), rows, func(c, r int) string {
			return strings.Repeat(string(rune('a'+c)), r%distinct%50) + fmt.Sprint(r%distinct)
		}, props)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := file.NewParquetReader(f)
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		for g := range len(md.RowGroups) {
			rg := md.RowGroup(g)
			for c := range rg.NumColumns() {
				col, err := rg.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				start := col.DataPageOffset()
				if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
					start = col.DictionaryPageOffset()
				}
				var sum, largest int64
				for off := start; off < start+col.TotalCompressedSize(); {
					h, _, err := readPageHeader(f, off, st.Size(), nil)
					if err != nil {
						t.Fatalf("trial %d row group %d column %d: header at %d: %v", trial, g, c, off, err)
					}
					sum += h.headerLen + h.compressed
					largest = max(largest, h.compressed)
					off += h.headerLen + h.compressed
				}
				if sum != col.TotalCompressedSize() {
					t.Fatalf("trial %d row group %d column %d: headers and pages add up to %d bytes, the chunk has %d", trial, g, c, sum, col.TotalCompressedSize())
				}
				buf, _, _, err := chunkCompressedBuffer(context.Background(), f, st.Size(), col, nil)
				if err != nil {
					t.Fatal(err)
				}
				if buf < largest || buf < decompressBufferStart || buf > max(2*largest, decompressBufferStart) {
					t.Fatalf("trial %d: buffer of %d bytes for a largest compressed page of %d", trial, buf, largest)
				}
			}
		}
		pf.Close()
	}
}

// TestParquetCompressedPagesMeasured: a page of 12 MiB that compresses
// well is read under a 16 MiB limit; its compressed bytes are reserved
// as measured (the page header's size, in a buffer grown as the reader
// grows it), not estimated as another page (twice 12 MiB did not fit).
func TestParquetCompressedPagesMeasured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "compressible.parquet")
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(1<<30), parquet.WithMaxRowGroupLength(1<<20))
	const rows, size = 12, 1 << 20
	writeColumnsParquet(t, path, 1, rows, func(_, r int) string { return strings.Repeat(string(rune('a'+r)), size) }, props)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	col, _ := pf.MetaData().RowGroup(0).ColumnChunk(0)
	chunk, uncompressed := col.TotalCompressedSize(), col.TotalUncompressedSize()
	pf.Close()

	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	schema := arrow.NewSchema([]arrow.Field{{Name: "c0", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	s, err := NewSource(mem, schema, Options{Format: Parquet, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.open(context.Background(), path)
	if err != nil {
		t.Fatalf("a %d-byte page compressed to %d bytes under a 16 MiB limit: %v", uncompressed, chunk, err)
	}
	var n int64
	for {
		rec, err := op.Next(context.Background())
		if isEOF(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	op.Close()
	if n != rows {
		t.Fatalf("read %d rows, want %d", n, rows)
	}
	// The reservation at its peak: the page (its uncompressed bytes, the
	// chunk's less its header) and the reader's buffer, 16 KiB grown to
	// the compressed page (the chunk's bytes less a header), and the
	// column's stream buffer.
	lo := (uncompressed - 1<<10) + max(chunk-1<<10, decompressBufferStart) + parquetStreamBuffer
	hi := uncompressed + max(chunk, decompressBufferStart) + parquetStreamBuffer
	t.Logf("page %d bytes, chunk %d bytes compressed, reserved at most %d", uncompressed, chunk, mem.peak)
	if mem.peak < lo || mem.peak > hi {
		t.Errorf("reserved at most %d bytes, want the page and its compressed bytes as measured, %d..%d", mem.peak, lo, hi)
	}
	if mem.held != 0 {
		t.Errorf("%d bytes still reserved after Close", mem.held)
	}
	mem.AssertSize(t, 0)
}

// TestParquetCompressedPagesOverLimit: a file of three columns whose
// incompressible 8 MiB pages are each under a 16 MiB limit, but whose
// compressed bytes (a reader's buffer per column, 24 MiB together) are
// not, is refused when it is opened, naming the file, the compressed
// pages and the largest column chunk, before any page is read or
// reserved; the allocator ends at zero.
func TestParquetCompressedPagesOverLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.parquet")
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(1<<30), parquet.WithMaxRowGroupLength(1<<20))
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 1<<20)
	writeColumnsParquet(t, path, 3, 8, func(_, _ int) string {
		for i := range buf {
			buf[i] = 'a' + byte(rng.IntN(26))
		}
		return string(buf)
	}, props)

	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	schema := arrow.NewSchema([]arrow.Field{{Name: "c0", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	s, err := NewSource(mem, schema, Options{Format: Parquet, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	op, err := s.open(context.Background(), path)
	runtime.ReadMemStats(&after)
	if err == nil {
		op.Close()
		t.Fatal("opened a file whose compressed pages take 24 MiB under a 16 MiB limit")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{path, "compressed pages of", "column c"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if !errors.Is(err, errOverLimit) {
		t.Errorf("error %v is not the limit's", err)
	}
	// Only the three columns' stream buffers were reserved (and returned).
	if mem.peak > 3*parquetStreamBuffer || mem.held != 0 {
		t.Errorf("reserved %d bytes (%d still held) before refusing: a page was read", mem.peak, mem.held)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("opening allocated %d bytes on the Go heap", got)
	}
	mem.AssertSize(t, 0)
}

// FuzzParsePageHeader: any bytes parse into a header or an error, never
// a panic, and a parsed header lies within the bytes given and has sizes
// that are not negative.
func FuzzParsePageHeader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.parquet")
	writeColumnsParquet(f, path, 2, 300, func(c, r int) string { return fmt.Sprint(c, r%17) },
		parquet.NewWriterProperties(parquet.WithDataPageSize(512), parquet.WithStats(true)))
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	// Every offset of the file that holds a page header.
	for off := 4; off < len(data)-8; off++ {
		if _, err := parsePageHeader(data[off:min(off+256, len(data))]); err == nil {
			f.Add(data[off:min(off+256, len(data))])
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x15, 0x00, 0x15, 0x80, 0x80, 0x80, 0x80, 0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parsePageHeader(b)
		if err != nil {
			if !errors.Is(err, errShortHeader) && bytes.Equal(b, nil) {
				t.Fatalf("empty input: %v, want errShortHeader", err)
			}
			return
		}
		if h.headerLen <= 0 || h.headerLen > int64(len(b)) || h.compressed < 0 || h.uncompressed < 0 {
			t.Fatalf("header %+v from %d bytes", h, len(b))
		}
	})
}

// TestParquetStreamBuffersCounted: the reader's buffered stream holds a
// 1 MiB buffer per column however small the column's chunk, so a file of
// 40 short columns takes 40 MiB to read. Under a 16 MiB limit it is
// refused when it is opened, with the limit's error naming the file and
// the stream buffers, having reserved nothing else; a file of 3 columns
// still reads under the same limit, and the allocator ends at zero.
func TestParquetStreamBuffersCounted(t *testing.T) {
	dir := t.TempDir()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	wide, narrow := filepath.Join(dir, "wide.parquet"), filepath.Join(dir, "narrow.parquet")
	value := func(c, r int) string { return fmt.Sprintf("v%d-%d", c, r) }
	writeColumnsParquet(t, wide, 40, 100, value, props)
	writeColumnsParquet(t, narrow, 3, 100, value, props)
	schema := arrow.NewSchema([]arrow.Field{{Name: "c0", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	open := func(mem memory.Allocator, path string) (int64, error) {
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

	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	_, err := open(mem, wide)
	if err == nil {
		t.Fatal("read a 40-column file, whose stream buffers take 40 MiB, under a 16 MiB limit")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{wide, "stream buffers", "40 columns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if !errors.Is(err, errOverLimit) {
		t.Errorf("error %v is not the limit's", err)
	}
	if mem.peak != 0 || mem.held != 0 {
		t.Errorf("reserved %d bytes (%d still held) before refusing", mem.peak, mem.held)
	}
	mem.AssertSize(t, 0)

	mem = &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	n, err := open(mem, narrow)
	if err != nil || n != 100 {
		t.Fatalf("read %d rows (%v) of a 3-column file under a 16 MiB limit, want 100", n, err)
	}
	if mem.peak < 3*parquetStreamBuffer || mem.held != 0 {
		t.Errorf("reserved at most %d bytes for 3 stream buffers of %d, %d still held", mem.peak, parquetStreamBuffer, mem.held)
	}
	mem.AssertSize(t, 0)
}
