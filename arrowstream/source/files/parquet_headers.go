package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/thrift/lib/go/thrift"
)

// Measuring a Parquet file's compressed pages before reading it.
//
// arrow-go's page reader (v17) copies each page's compressed bytes into a
// bytes.Buffer of its own, one per column chunk being read, which it does
// not allocate through the allocator it is given; the buffer is reused
// from page to page and grows, as a bytes.Buffer does, to the larger of
// the page and twice its capacity. Its size is not an estimate to be
// guessed from the decoded pages: the page headers say each page's
// compressed size, so the file's pages are measured by reading their
// headers (a few dozen bytes each) before any page is read, and the
// reader's buffers reserved for exactly what they will grow to.

// Page header reading limits, as arrow-go's page reader has them: a
// header is first read in a window of 16 KiB, doubled while it does not
// parse, up to 16 MiB.
const (
	pageHeaderWindow    = 16 << 10
	maxPageHeaderWindow = 16 << 20
)

// decompressBufferStart is the capacity the page reader gives its
// compressed-bytes buffer when it is made (Grow(defaultPageHeaderSize)).
const decompressBufferStart = 16 << 10

// pageHeader is what is read of a Parquet page header: its compressed and
// uncompressed sizes, and its own length in the file.
type pageHeader struct {
	compressed, uncompressed int64
	headerLen                int64
}

// errShortHeader is a page header cut off by the end of the bytes given.
var errShortHeader = errors.New("page header cut off")

// PageHeader field ids and types (parquet.thrift).
const (
	fieldUncompressedSize = 2
	fieldCompressedSize   = 3
)

// parsePageHeader reads the Thrift (compact protocol) PageHeader at the
// start of b: fields 2 (uncompressed_page_size) and 3
// (compressed_page_size), both required; every other field is skipped.
// It returns errShortHeader when b ends inside the header.
func parsePageHeader(b []byte) (pageHeader, error) {
	ctx := context.Background()
	tr := thrift.NewTMemoryBuffer()
	tr.Buffer = bytes.NewBuffer(b)
	// No length inside the header may claim more than the bytes there are
	// (a binary field of a claimed 2 GB would be allocated before the read
	// failed).
	p := thrift.NewTCompactProtocolConf(tr, &thrift.TConfiguration{MaxMessageSize: int32(min(len(b), math.MaxInt32))})
	h := pageHeader{compressed: -1, uncompressed: -1}
	err := func() error {
		if _, err := p.ReadStructBegin(ctx); err != nil {
			return err
		}
		for {
			_, typ, id, err := p.ReadFieldBegin(ctx)
			if err != nil {
				return err
			}
			if typ == thrift.STOP {
				break
			}
			switch {
			case typ == thrift.I32 && (id == fieldUncompressedSize || id == fieldCompressedSize):
				v, err := p.ReadI32(ctx)
				if err != nil {
					return err
				}
				if id == fieldCompressedSize {
					h.compressed = int64(v)
				} else {
					h.uncompressed = int64(v)
				}
			default:
				if err := thrift.SkipDefaultDepth(ctx, p, typ); err != nil {
					return err
				}
			}
			if err := p.ReadFieldEnd(ctx); err != nil {
				return err
			}
		}
		return p.ReadStructEnd(ctx)
	}()
	if err != nil {
		if tr.Len() == 0 {
			return h, errShortHeader
		}
		return h, fmt.Errorf("page header: %w", err)
	}
	if h.compressed < 0 || h.uncompressed < 0 {
		return h, fmt.Errorf("page header: compressed size %d, uncompressed size %d", h.compressed, h.uncompressed)
	}
	h.headerLen = int64(len(b) - tr.Len())
	return h, nil
}

// readPageHeader reads the page header at off in r, of a column chunk
// ending at end (the end of the file at most): a 16 KiB window first,
// doubled while the header does not fit, as arrow-go reads it.
func readPageHeader(r io.ReaderAt, off, end int64, buf []byte) (pageHeader, []byte, error) {
	for window := int64(pageHeaderWindow); ; window *= 2 {
		n := min(window, end-off)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return pageHeader{}, buf, err
		}
		h, err := parsePageHeader(b)
		if errors.Is(err, errShortHeader) && n == window && window < maxPageHeaderWindow {
			continue
		}
		return h, buf, err
	}
}

// decompressBufferSize is the capacity the page reader's compressed-bytes
// buffer reaches over pages of the given compressed sizes, in order: a
// bytes.Buffer grown to hold n bytes takes the larger of n and twice its
// capacity.
func decompressBufferSize(capacity int64, compressed int64) int64 {
	if compressed <= capacity {
		return capacity
	}
	return max(compressed, 2*capacity)
}

// chunkCompressedBuffer measures one column chunk: the capacity the page
// reader's compressed-bytes buffer grows to while it reads the chunk's
// pages, and the number of pages. size is the file's size.
func chunkCompressedBuffer(ctx context.Context, r io.ReaderAt, size int64, col *metadata.ColumnChunkMetaData, buf []byte) (int64, int, []byte, error) {
	start := col.DataPageOffset()
	if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
		start = col.DictionaryPageOffset()
	}
	length := col.TotalCompressedSize()
	if start < 0 || length < 0 || start > size {
		return 0, 0, buf, fmt.Errorf("column chunk at offset %d of %d bytes is outside the file of %d bytes", start, length, size)
	}
	// Old parquet-mr writers left the dictionary page header out of the
	// chunk's length (PARQUET-816): a header may start before end and run
	// past it, so headers are read up to the file's end; a page must
	// start before the chunk's end.
	end := min(start+length, size)
	capacity := int64(decompressBufferStart)
	pages := 0
	for off := start; off < end; pages++ {
		if pages%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return 0, 0, buf, err
			}
		}
		h, b, err := readPageHeader(r, off, size, buf)
		buf = b
		if err != nil {
			return 0, 0, buf, fmt.Errorf("page at offset %d: %w", off, err)
		}
		capacity = decompressBufferSize(capacity, h.compressed)
		off += h.headerLen + h.compressed
	}
	return capacity, pages, buf, nil
}

// compressedPageBytes measures what the page reader's compressed-bytes
// buffers of a file hold at most while it is read through pqarrow (every
// column at once, each with its own page reader): for each column, the
// largest buffer any of its row groups' chunks grows to, summed over the
// columns. It names the largest column chunk found.
func compressedPageBytes(ctx context.Context, r io.ReaderAt, size int64, md *metadata.FileMetaData) (total int64, largest string, err error) {
	perColumn := make([]int64, md.Schema.NumColumns())
	var largestBytes int64
	var buf []byte
	for g := range len(md.RowGroups) {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			col, err := rg.ColumnChunk(c)
			if err != nil {
				return 0, "", err
			}
			n, pages, b, err := chunkCompressedBuffer(ctx, r, size, col, buf)
			buf = b
			if err != nil {
				return 0, "", fmt.Errorf("row group %d column %s: %w", g, md.Schema.Column(c).Path(), err)
			}
			if c < len(perColumn) {
				perColumn[c] = max(perColumn[c], n)
			}
			if n > largestBytes {
				largestBytes = n
				largest = fmt.Sprintf("column %s of row group %d, pages: %d", md.Schema.Column(c).Path(), g, pages)
			}
		}
	}
	for _, n := range perColumn {
		total += n
	}
	return total, largest, nil
}
