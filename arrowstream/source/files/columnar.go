package files

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// parquetBatchRows is the number of rows per record read from Parquet.
const parquetBatchRows = 64 * 1024

// columnarFile is an operator over a Parquet or Arrow IPC file: records
// come from arrow's reader and are projected onto the output schema by
// column name.
type columnarFile struct {
	name    string
	out     *arrow.Schema
	idx     []int // file column of each output column
	next    func() (arrow.Record, error)
	closeFn func()
	err     error
}

// openColumnar opens path (Parquet or Arrow IPC, file or stream format)
// for reading into out (nil: the file's own schema, returned by Schema).
func openColumnar(ctx context.Context, mem memory.Allocator, format Format, path string, out *arrow.Schema) (*columnarFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	c := &columnarFile{name: path}
	var fileSchema *arrow.Schema
	switch format {
	case Parquet:
		// Pages are made on the Go heap and reserved through mem, the
		// column chunks streamed (parquet_pages.go). The decoded columns
		// come from mem.
		props := parquet.NewReaderProperties(parquetPageMemory(mem))
		props.BufferedStreamEnabled = true
		props.BufferSize = parquetStreamBuffer
		pf, err := file.NewParquetReader(f, file.WithReadProps(props))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("files: parquet %s: %w", path, err)
		}
		// The reader's compressed-bytes buffers are measured from the page
		// headers and reserved before any page is read
		// (parquet_headers.go).
		releaseBufs, err := reserveStreamBuffers(mem, pf)
		if err != nil {
			pf.Close()
			return nil, fmt.Errorf("files: parquet %s: %w", path, err)
		}
		releasePages, err := reserveCompressedPages(ctx, mem, f, pf)
		if err != nil {
			pf.Close()
			releaseBufs()
			return nil, fmt.Errorf("files: parquet %s: %w", path, err)
		}
		release := func() { releasePages(); releaseBufs() }
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, mem)
		if err == nil {
			fileSchema, err = fr.Schema()
		}
		var rr pqarrow.RecordReader
		if err == nil {
			rr, err = fr.GetRecordReader(ctx, nil, nil)
		}
		if err != nil {
			pf.Close()
			release()
			return nil, fmt.Errorf("files: parquet %s: %w", path, err)
		}
		c.next = func() (arrow.Record, error) {
			rec, err := readParquet(rr.Read)
			if rec != nil {
				rec.Retain()
				return rec, nil
			}
			return nil, err
		}
		c.closeFn = func() { rr.Release(); pf.Close(); release() }
	case Arrow:
		br := bufio.NewReader(f)
		magic, _ := br.Peek(6)
		if string(magic) == "ARROW1" {
			fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("files: arrow %s: %w", path, err)
			}
			fileSchema = fr.Schema()
			i := 0
			c.next = func() (arrow.Record, error) {
				if i >= fr.NumRecords() {
					return nil, io.EOF
				}
				i++
				return fr.RecordAt(i - 1)
			}
			c.closeFn = func() { fr.Close(); f.Close() }
		} else {
			sr, err := ipc.NewReader(br, ipc.WithAllocator(mem))
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("files: arrow %s: %w", path, err)
			}
			fileSchema = sr.Schema()
			c.next = func() (arrow.Record, error) {
				if sr.Next() {
					rec := sr.Record()
					rec.Retain()
					return rec, nil
				}
				if err := sr.Err(); err != nil {
					return nil, err
				}
				return nil, io.EOF
			}
			c.closeFn = func() { sr.Release(); f.Close() }
		}
	default:
		f.Close()
		return nil, fmt.Errorf("files: %s is not a columnar format", format)
	}
	if out == nil {
		out = fileSchema
	}
	c.out = out
	c.idx = make([]int, out.NumFields())
	for i, fld := range out.Fields() {
		j := fileSchema.FieldIndices(fld.Name)
		if len(j) == 0 {
			c.Close()
			return nil, fmt.Errorf("files: %s has no column %s (it has %s)", path, fld.Name, fileSchema)
		}
		if ft := fileSchema.Field(j[0]).Type; !arrow.TypeEqual(ft, fld.Type) {
			c.Close()
			return nil, fmt.Errorf("files: %s: column %s is %s in the file, the schema says %s", path, fld.Name, ft, fld.Type)
		}
		c.idx[i] = j[0]
	}
	return c, nil
}

// Schema implements vector.Operator.
func (c *columnarFile) Schema() *arrow.Schema { return c.out }

// Next implements vector.Operator.
func (c *columnarFile) Next(ctx context.Context) (arrow.Record, error) {
	for c.err == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := c.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.err = io.EOF
			} else {
				c.err = fmt.Errorf("files: read %s: %w", c.name, err)
			}
			break
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		cols := make([]arrow.Array, len(c.idx))
		for i, j := range c.idx {
			cols[i] = rec.Column(j)
		}
		out := array.NewRecord(c.out, cols, rec.NumRows())
		rec.Release()
		return out, nil
	}
	return nil, c.err
}

// Close implements vector.Operator.
func (c *columnarFile) Close() error {
	if c.closeFn != nil {
		c.closeFn()
		c.closeFn = nil
	}
	if c.err == nil {
		c.err = io.EOF
	}
	return nil
}
