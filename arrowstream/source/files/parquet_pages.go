package files

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"

	"github.com/arrowstream/arrowstream/vector"
)

// Counting a Parquet file's pages against the query's memory limit.
//
// arrow-go's page reader (v17) hands out each page as a view of a buffer
// it has already freed, so pages cannot come from a pooling allocator:
// they are made on the Go heap (a freed Go buffer stays valid while
// something refers to it). They are still reserved through the query's
// allocator (vector.MemoryReserver): pageAllocator reserves each page
// buffer before making it and returns the reservation when the reader
// frees it. A page buffer is the page's uncompressed bytes. The
// reader first copies the page's compressed bytes into a buffer of its
// own (a bytes.Buffer it does not allocate through us, one per column
// being read); those buffers are measured from the page headers and
// reserved when the file is opened (reserveCompressedPages,
// parquet_headers.go), so a page buffer reserves its own size only.
//
// The column chunk is read through a buffered stream (BufferedStreamEnabled,
// parquetStreamBuffer bytes), so no chunk is read whole: without it the
// reader copies a whole column chunk, twice, onto the Go heap, which no
// limit saw. The streams' buffers (one per column) are reserved when the
// file is opened (reserveStreamBuffers).
//
// A reservation the limit refuses cannot be returned as an error through
// memory.Allocator, so pageAllocator panics with a pageLimitError, which
// the Parquet read recovers into an error naming the file (readParquet).

// parquetStreamBuffer is the buffered stream's buffer per column chunk.
const parquetStreamBuffer = 1 << 20

// pageAllocator makes Parquet pages on the Go heap, reserving them
// through res.
type pageAllocator struct {
	mem memory.Allocator // the Go allocator
	res vector.MemoryReserver
}

var _ memory.Allocator = (*pageAllocator)(nil)

// pageLimitError is the panic of a refused page reservation.
type pageLimitError struct{ err error }

// pageReservation is what a page buffer of n bytes reserves.
func pageReservation(n int) int64 { return int64(n) }

func (p *pageAllocator) reserve(n int64) {
	if n == 0 {
		return
	}
	if err := p.res.Reserve(n); err != nil {
		panic(pageLimitError{fmt.Errorf("a Parquet page of %d bytes: %w", n, err)})
	}
}

// Allocate implements memory.Allocator.
func (p *pageAllocator) Allocate(size int) []byte {
	p.reserve(pageReservation(size))
	return p.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (p *pageAllocator) Reallocate(size int, b []byte) []byte {
	if d := pageReservation(size) - pageReservation(len(b)); d > 0 {
		p.reserve(d)
	} else if d < 0 {
		_ = p.res.Reserve(d)
	}
	return p.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (p *pageAllocator) Free(b []byte) {
	_ = p.res.Reserve(-pageReservation(len(b)))
	p.mem.Free(b)
}

// parquetPageMemory returns the allocator for a Parquet file's pages read
// for a query on mem: a pageAllocator when mem enforces a limit, else the
// Go allocator.
func parquetPageMemory(mem memory.Allocator) memory.Allocator {
	goMem := memory.NewGoAllocator()
	if res, ok := mem.(vector.MemoryReserver); ok {
		return &pageAllocator{mem: goMem, res: res}
	}
	return goMem
}

// reserveCompressedPages reserves, through mem when it enforces a limit,
// what the page reader's compressed-bytes buffers of pf (read from f)
// will hold, measured from its page headers, and returns the function
// that returns the reservation. A reservation the limit refuses is the
// error, naming the largest column chunk.
func reserveCompressedPages(ctx context.Context, mem memory.Allocator, f *os.File, pf *file.Reader) (func(), error) {
	res, ok := mem.(vector.MemoryReserver)
	if !ok {
		return func() {}, nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n, largest, err := compressedPageBytes(ctx, f, st.Size(), pf.MetaData())
	if err != nil {
		return nil, fmt.Errorf("measuring its pages: %w", err)
	}
	if err := res.Reserve(n); err != nil {
		return nil, fmt.Errorf("compressed pages of %d bytes (the largest in %s): %w", n, largest, err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = res.Reserve(-n) }) }, nil
}

// reserveStreamBuffers reserves, through mem when it enforces a limit,
// the buffered streams' buffers of pf: the record reader reads every
// column of a row group at once, each through a stream whose buffer is
// parquetStreamBuffer bytes on the Go heap however small its chunk, so a
// file of many columns holds a MiB per column. A refusal is the error,
// naming the columns and the buffer size; the function returned returns
// the reservation.
func reserveStreamBuffers(mem memory.Allocator, pf *file.Reader) (func(), error) {
	res, ok := mem.(vector.MemoryReserver)
	if !ok {
		return func() {}, nil
	}
	cols := pf.MetaData().Schema.NumColumns()
	n := int64(cols) * parquetStreamBuffer
	if err := res.Reserve(n); err != nil {
		return nil, fmt.Errorf("the reader's stream buffers of %d bytes (%d columns, %d bytes each): %w", n, cols, parquetStreamBuffer, err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = res.Reserve(-n) }) }, nil
}

// readParquet calls read (a Parquet reader's Read), turning a refused page
// reservation into its error.
func readParquet[T any](read func() (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(pageLimitError)
			if !ok {
				panic(r)
			}
			err = pe.err
		}
	}()
	return read()
}
