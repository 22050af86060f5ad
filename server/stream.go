package server

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/vector"
)

// sendStream writes schema and then every record of op to a DoGet stream,
// on the calling goroutine. It is the server's only producer: there is no
// goroutine or channel between the operator and gRPC, so when the client
// goes away the blocked Send returns, the loop ends and op is closed,
// releasing every record and snapshot (flight.StreamChunksFromReader, by
// contrast, leaks its goroutine; arrow-go issue 435). Records larger than
// the batch target are sent as zero-copy slices so that every message
// stays under the clients' message limit. op is always closed.
func (s *Server) sendStream(ctx context.Context, stream flight.FlightService_DoGetServer, schema *arrow.Schema, op vector.Operator) (err error) {
	return s.sendStreamOn(ctx, stream, schema, op, s.mem)
}

// sendStreamOn is sendStream with the IPC writer's buffers (body
// compression, padding) allocated from mem: a query's accounting
// allocator, so that what a result stream costs counts against the
// query's and the server's memory limits.
func (s *Server) sendStreamOn(ctx context.Context, stream flight.FlightService_DoGetServer, schema *arrow.Schema, op vector.Operator, mem memory.Allocator) (err error) {
	stream, op, guard := s.guardStream(ctx, stream, op)
	defer guard.stop()
	defer func() {
		if r := recover(); r != nil {
			err = panicError("stream", r)
			s.log.Error("panic while streaming", "panic", r, "stack", stack())
		}
		if cerr := op.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	opts := append([]ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(mem)}, s.ipcOpts...)
	w := flight.NewRecordWriter(stream, opts...)
	closed := false
	defer func() {
		if !closed {
			w.Close() // releases the writer's state; the stream is failing anyway
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		err = s.writeRecord(w, schema, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	closed = true
	return w.Close()
}

// writeRecord writes rec, sliced into pieces of about the batch target
// size. A record whose schema differs from the stream's only in
// nullability or metadata is relabelled (zero-copy).
func (s *Server) writeRecord(w *flight.Writer, schema *arrow.Schema, rec arrow.Record) error {
	if rec.Schema() != schema && !rec.Schema().Equal(schema) {
		if !sameShape(rec.Schema(), schema) {
			return statusf(codes.Internal, "result record has columns (%s), the stream declared (%s)", describeSchema(rec.Schema()), describeSchema(schema))
		}
		rec = array.NewRecord(schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	n := rec.NumRows()
	size := recordBytes(rec)
	if size <= s.cfg.Limits.BatchBytes || n <= 1 {
		return w.Write(rec)
	}
	target := s.cfg.Limits.BatchBytes
	step := max(n/((size+target-1)/target), 1)
	for off := int64(0); off < n; {
		// Uneven rows (long strings) can still make a piece too big: halve
		// it until it fits or is one row.
		end := min(off+step, n)
		for {
			piece := rec.NewSlice(off, end)
			if end-off == 1 || recordBytes(piece) <= target {
				err := w.Write(piece)
				piece.Release()
				if err != nil {
					return err
				}
				break
			}
			piece.Release()
			end = off + (end-off)/2
		}
		off = end
	}
	return nil
}

// sameShape reports whether two schemas have the same column names and
// types in order.
func sameShape(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

// recordBytes estimates the bytes the IPC body of rec takes: exact for
// fixed-width and string/binary columns (offsets included), proportional
// to the sliced rows for other types, plus the padding of a column's
// buffers to 8 bytes.
func recordBytes(rec arrow.Record) int64 {
	return vector.SlicedRecordBytes(rec) + 8*rec.NumCols()
}
