package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// filesOp reads a list of files one after the other, opening each only
// when the previous one is done (an epoch's memory is one file's worth).
type filesOp struct {
	s     *Source
	files []fileInfo
	cur   vector.Operator
	err   error
}

func (s *Source) readFiles(files []fileInfo) vector.Operator {
	return &filesOp{s: s, files: files}
}

// Schema implements vector.Operator.
func (o *filesOp) Schema() *arrow.Schema { return o.s.out }

// Next implements vector.Operator.
func (o *filesOp) Next(ctx context.Context) (arrow.Record, error) {
	for o.err == nil {
		if o.cur == nil {
			if len(o.files) == 0 {
				o.err = io.EOF
				break
			}
			f := o.files[0]
			o.files = o.files[1:]
			cur, err := o.s.open(ctx, f.Path)
			if err != nil {
				o.err = err
				break
			}
			o.cur = cur
		}
		rec, err := o.cur.Next(ctx)
		if err == nil {
			return rec, nil
		}
		o.cur.Close()
		o.cur = nil
		if !errors.Is(err, io.EOF) {
			o.err = err
		}
	}
	return nil, o.err
}

// Close implements vector.Operator.
func (o *filesOp) Close() error {
	if o.cur != nil {
		o.cur.Close()
		o.cur = nil
	}
	if o.err == nil {
		o.err = io.EOF
	}
	return nil
}

// open returns the operator over one file.
func (s *Source) open(ctx context.Context, path string) (vector.Operator, error) {
	if s.codec == nil {
		return openColumnar(ctx, s.mem, s.opts.Format, path, s.out)
	}
	// Read as a stream, a window at a time (read_stream.go), never whole.
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return s.streamLines(path, file), nil
}

// lineOperator decodes CSV or JSON data (a whole file) of name.
func (s *Source) lineOperator(name string, data []byte) *lineFile {
	first := 1
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark is not data
	if s.opts.Format == CSV && s.opts.Header {
		// The header names columns; a user schema is taken by position, as
		// Spark's enforceSchema default does.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		} else {
			data = nil
		}
		first = 2
	}
	return &lineFile{
		mem: s.mem, codec: s.codec, name: name, data: data, line: first,
		out: s.out, corrupt: s.corrupt, mode: s.opts.Mode, chunk: s.opts.ChunkBytes, stats: &s.stats,
	}
}
