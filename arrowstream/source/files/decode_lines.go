package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/clip"
	"github.com/arrowstream/arrowstream/vector"
)

// lineCodec decodes complete lines of one text format with arrow's reader.
type lineCodec interface {
	// decode turns data (whole lines) into records of the decode schema,
	// owned by the caller. It may panic: arrow's readers do on some bad
	// input, and safeDecode recovers.
	decode(mem memory.Allocator, data []byte) ([]arrow.Record, error)
	// explain says which column (or position) makes one line malformed,
	// for FAILFAST's message; it runs on the error path only.
	explain(line []byte) string
}

// recordReader is what arrow's CSV and JSON readers have in common.
type recordReader interface {
	Next() bool
	Record() arrow.Record
	Err() error
	Release()
}

// drainRecords returns every record of r, retained, and releases r; on a read
// error it releases what it read and returns the error.
func drainRecords(r recordReader) ([]arrow.Record, error) {
	defer r.Release()
	var out []arrow.Record
	for r.Next() {
		rec := r.Record()
		rec.Retain()
		out = append(out, rec)
	}
	if err := r.Err(); err != nil {
		for _, rec := range out {
			rec.Release()
		}
		return nil, err
	}
	return out, nil
}

// ErrMalformed is wrapped by FAILFAST's error for a malformed record.
var ErrMalformed = fmt.Errorf("malformed record")

// maxCauseBytes bounds the decoder's message in a malformed record's error.
const maxCauseBytes = 1 << 10

// safeDecode runs codec.decode under a scoped allocator and recover: on
// failure nothing it allocated stays allocated, and a panic inside arrow's
// reader becomes an error.
func safeDecode(mem memory.Allocator, codec lineCodec, data []byte) (recs []arrow.Record, err error) {
	scope := newScopedAlloc(mem)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
		if err != nil {
			for _, r := range recs {
				r.Release()
			}
			recs = nil
			scope.abandon()
		}
	}()
	return codec.decode(scope, data)
}

// counters are a source's malformed-record counts (progress metrics).
type counters struct {
	malformed atomic.Int64 // records found malformed in the current batch
	dropped   atomic.Int64 // of which dropped (DROPMALFORMED)
	files     atomic.Int64 // files read in the current batch
}

// lineFile is an operator over one CSV or JSON file's data: it decodes
// ChunkRows lines at a time; a failed chunk is bisected until the
// malformed lines are isolated, and those are handled by the mode.
type lineFile struct {
	mem     memory.Allocator
	codec   lineCodec
	name    string
	data    []byte // after the header
	out     *arrow.Schema
	corrupt int // index of the corrupt-record column in out, or -1
	mode    Mode
	chunk   int // bytes per arrow reader call (extended to a line end)
	stats   *counters

	// stream, when not nil, is the file data is a window of
	// (read_stream.go); without it data is the whole input.
	stream *lineStream

	pos     int // byte offset of the next chunk
	line    int // line number (1-based) of the next chunk
	pending []arrow.Record
	err     error
}

// Schema implements vector.Operator.
func (f *lineFile) Schema() *arrow.Schema { return f.out }

// Next implements vector.Operator.
func (f *lineFile) Next(ctx context.Context) (arrow.Record, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return nil, f.err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := f.fill(); err != nil {
			f.err = err
			return nil, err
		}
		if f.pos >= len(f.data) {
			f.err = io.EOF
			return nil, io.EOF
		}
		if err := f.readChunk(); err != nil {
			f.err = err
			return nil, err
		}
	}
	r := f.pending[0]
	f.pending = f.pending[1:]
	return r, nil
}

// Close implements vector.Operator.
func (f *lineFile) Close() error {
	for _, r := range f.pending {
		r.Release()
	}
	f.pending = nil
	f.closeStream()
	if f.err == nil {
		f.err = io.EOF
	}
	return nil
}

// readChunk decodes the next chunk of whole lines into f.pending. The
// fast path is one arrow reader call; only a chunk that fails is cut into
// lines (bisected), so line offsets cost nothing on good input.
func (f *lineFile) readChunk() error {
	start := f.pos
	end := min(start+f.chunk, len(f.data))
	if end < len(f.data) && f.data[end-1] != '\n' {
		if i := bytes.IndexByte(f.data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(f.data)
		}
	}
	chunk := f.data[start:end]
	firstLine := f.line
	f.pos = end
	f.line += bytes.Count(chunk, []byte{'\n'})
	if chunk[len(chunk)-1] != '\n' {
		f.line++
	}
	recs, err := safeDecode(f.mem, f.codec, chunk)
	if err == nil {
		return f.emit(recs)
	}
	starts := []int{start}
	for p := start; p < end; {
		i := bytes.IndexByte(f.data[p:end], '\n')
		if i < 0 {
			p = end
		} else {
			p += i + 1
		}
		starts = append(starts, p)
	}
	n := len(starts) - 1
	if n == 1 {
		return f.malformed(bytes.TrimRight(chunk, "\r\n"), firstLine, err)
	}
	if err := f.decodeLines(starts, 0, n/2, firstLine); err != nil {
		return err
	}
	return f.decodeLines(starts, n/2, n, firstLine)
}

// emit queues decoded records as records of the output schema.
func (f *lineFile) emit(recs []arrow.Record) error {
	for i, r := range recs {
		if r.NumRows() == 0 {
			r.Release()
			continue
		}
		out, err := f.withCorruptColumn(r)
		r.Release()
		if err != nil {
			for _, rest := range recs[i+1:] {
				rest.Release()
			}
			return err
		}
		f.pending = append(f.pending, out)
	}
	return nil
}

// decodeLines decodes lines [a, b) of a failed chunk whose line offsets
// are starts, bisecting until the malformed lines are alone.
func (f *lineFile) decodeLines(starts []int, a, b, firstLine int) error {
	data := f.data[starts[a]:starts[b]]
	recs, err := safeDecode(f.mem, f.codec, data)
	if err == nil {
		return f.emit(recs)
	}
	if b-a > 1 {
		mid := a + (b-a)/2
		if err := f.decodeLines(starts, a, mid, firstLine); err != nil {
			return err
		}
		return f.decodeLines(starts, mid, b, firstLine)
	}
	return f.malformed(bytes.TrimRight(data, "\r\n"), firstLine+a, err)
}

// malformed handles one malformed line by the mode.
func (f *lineFile) malformed(line []byte, lineNo int, cause error) error {
	f.stats.malformed.Add(1)
	switch f.mode {
	case FailFast:
		// The decoder's error quotes the record, which may be as long as
		// the read window allows: its message is bounded.
		return fmt.Errorf("files: %s line %d%s: %w: %s", f.name, lineNo, f.codec.explain(line), ErrMalformed, clip.Text(cause.Error(), maxCauseBytes))
	case DropMalformed:
		f.stats.dropped.Add(1)
		return nil
	}
	// PERMISSIVE: a row of nulls, with the raw line when the schema asks.
	b := array.NewRecordBuilder(f.mem, f.out)
	defer b.Release()
	for i, fb := range b.Fields() {
		if i == f.corrupt {
			fb.(*array.StringBuilder).Append(string(line))
		} else {
			fb.AppendNull()
		}
	}
	f.pending = append(f.pending, b.NewRecord())
	return nil
}

// withCorruptColumn returns rec (decode schema) as a record of the output
// schema: the corrupt-record column, when there is one, is all null.
func (f *lineFile) withCorruptColumn(rec arrow.Record) (arrow.Record, error) {
	if f.corrupt < 0 {
		if !rec.Schema().Equal(f.out) {
			return nil, fmt.Errorf("files: %s: decoded schema %s, want %s", f.name, rec.Schema(), f.out)
		}
		rec.Retain()
		return rec, nil
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, f.out.NumFields())
	nulls := array.MakeArrayOfNull(f.mem, vector.String, n)
	defer nulls.Release()
	for i, j := 0, 0; i < f.out.NumFields(); i++ {
		if i == f.corrupt {
			cols = append(cols, nulls)
			continue
		}
		cols = append(cols, rec.Column(j))
		j++
	}
	return array.NewRecord(f.out, cols, int64(n)), nil
}
