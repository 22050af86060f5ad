package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/arrowstream/arrowstream/vector"
)

// ingest appends every batch of a DoPut stream to the ingest target name,
// one Append per batch, as the batches arrive (a client may push an
// endless stream). The schema is checked before the first row is
// accepted. It returns the rows appended; with ack set it sends a
// PutResult after each batch (app metadata: the rows appended so far, as
// a DoPutUpdateResult), so that a pushing client sees progress.
func (s *Server) ingest(ctx context.Context, name string, stream flight.FlightService_DoPutServer, ack bool) (int64, error) {
	if s.cfg.Ingest == nil {
		return 0, statusf(codes.Unimplemented, "this server accepts no DoPut ingest")
	}
	if err := s.checkUnrestricted(ctx, fmt.Sprintf("ingest into %q", name)); err != nil {
		return 0, err
	}
	target, ok := s.cfg.Ingest.LookupIngest(name)
	if !ok {
		return 0, statusf(codes.NotFound, "ingest into %q: no such ingest table (a memory or flight source table)", name)
	}
	if err := s.pool.admit(); err != nil {
		return 0, err
	}
	mem := &ingestAllocator{parent: s.mem, pool: s.pool}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem))
	if err != nil {
		return 0, statusf(codes.InvalidArgument, "ingest into %q: read the stream's schema: %v", name, err)
	}
	defer rdr.Release()
	if err := checkIngestSchema(rdr.Schema(), target.Schema()); err != nil {
		return 0, statusf(codes.InvalidArgument, "ingest into %q: %v", name, err)
	}
	return s.appendAll(ctx, name, rdr, mem, target, stream, ack)
}

// appendAll appends the batches of rdr; mem, when not nil, is the
// allocator rdr decodes on, whose per-batch count is checked against the
// per-query memory limit.
func (s *Server) appendAll(ctx context.Context, name string, rdr flight.MessageReader, mem *ingestAllocator, target IngestTarget, stream flight.FlightService_DoPutServer, ack bool) (int64, error) {
	var rows int64
	for batch := 0; rdr.Next(); batch++ {
		rec := rdr.Record()
		if mem != nil {
			if err := mem.checkBatch(name, batch, s.cfg.Limits.QueryMemoryBytes); err != nil {
				return rows, err
			}
		}
		if rec.NumRows() == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rows, statusOf(err, codes.Canceled)
		}
		if err := s.pool.admit(); err != nil {
			return rows, err
		}
		// Checked before the target sees it: a malformed batch is
		// rejected whole, and the batches before it stay appended.
		if err := validateRecord(rec); err != nil {
			return rows, statusf(codes.InvalidArgument, "ingest into %q: batch %d (after %d rows) is malformed, nothing of it was appended: %v", name, batch, rows, err)
		}
		if err := appendOne(ctx, target, rec); err != nil {
			return rows, statusOf(fmt.Errorf("ingest into %q: %w", name, err), codes.InvalidArgument)
		}
		rows += rec.NumRows()
		if ack {
			if err := sendRows(stream, rows); err != nil {
				return rows, err
			}
		}
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return rows, statusOf(fmt.Errorf("ingest into %q: %w", name, err), codes.InvalidArgument)
	}
	return rows, nil
}

// appendOne appends rec labelled with the target's schema: the stream's
// schema was checked, but nullability and the case of names may differ.
func appendOne(ctx context.Context, target IngestTarget, rec arrow.Record) error {
	if want := target.Schema(); rec.Schema() != want {
		rec = array.NewRecord(want, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	return target.Append(ctx, rec)
}

// sendRows acknowledges rows with a DoPutUpdateResult.
func sendRows(stream flight.FlightService_DoPutServer, rows int64) error {
	meta, err := proto.Marshal(&pb.DoPutUpdateResult{RecordCount: rows})
	if err != nil {
		return statusOf(err, codes.Internal)
	}
	return stream.Send(&flight.PutResult{AppMetadata: meta})
}

// checkIngestSchema accepts batches with the target's column names and
// types in order (nullability aside); the error names every difference.
func checkIngestSchema(got, want *arrow.Schema) error {
	var diffs []string
	gf := map[string]arrow.Field{}
	for _, f := range got.Fields() {
		gf[strings.ToLower(f.Name)] = f
	}
	wf := map[string]bool{}
	for i, w := range want.Fields() {
		wf[strings.ToLower(w.Name)] = true
		g, ok := gf[strings.ToLower(w.Name)]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("missing column %q (%s)", w.Name, vector.TypeName(w.Type)))
		case !arrow.TypeEqual(g.Type, w.Type):
			diffs = append(diffs, fmt.Sprintf("column %q is %s, the table has %s", w.Name, vector.TypeName(g.Type), vector.TypeName(w.Type)))
		case i >= got.NumFields() || !strings.EqualFold(got.Field(i).Name, w.Name):
			diffs = append(diffs, fmt.Sprintf("column %q is out of place (the table's column %d)", w.Name, i+1))
		}
	}
	for _, g := range got.Fields() {
		if !wf[strings.ToLower(g.Name)] {
			diffs = append(diffs, fmt.Sprintf("unexpected column %q (%s)", g.Name, vector.TypeName(g.Type)))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("schema mismatch: %s; the table has columns (%s), the stream sent (%s)",
		strings.Join(diffs, "; "), describeSchema(want), describeSchema(got))
}

// DoPutCommandStatementIngest implements Flight SQL bulk ingest into an
// existing ingest table (append only).
// The service routes ingest to sqlIngest, which decodes on an accounted
// allocator; this method is what arrow-go's router would call.
func (q *sqlServer) DoPutCommandStatementIngest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	return q.ingest(ctx, cmd, rdr, nil)
}

// ingest appends a bulk-ingest stream; mem, when not nil, is the
// allocator rdr decodes on (see appendAll).
func (q *sqlServer) ingest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader, mem *ingestAllocator) (int64, error) {
	s := q.s
	if s.cfg.Ingest == nil {
		return 0, statusf(codes.Unimplemented, "this server accepts no bulk ingest")
	}
	name := cmd.GetTable()
	if err := s.checkUnrestricted(ctx, fmt.Sprintf("ingest into %q", name)); err != nil {
		return 0, err
	}
	if len(cmd.GetTransactionId()) > 0 || cmd.GetTemporary() {
		return 0, statusf(codes.Unimplemented, "ingest into %q: transactions and temporary tables are not supported", name)
	}
	if opts := cmd.GetTableDefinitionOptions(); opts != nil {
		if opts.IfExists == flightsql.TableDefinitionOptionsTableExistsOptionReplace ||
			opts.IfExists == flightsql.TableDefinitionOptionsTableExistsOptionFail {
			return 0, statusf(codes.Unimplemented, "ingest into %q: only appending to an existing table is supported", name)
		}
	}
	target, ok := s.cfg.Ingest.LookupIngest(name)
	if !ok {
		return 0, statusf(codes.NotFound, "ingest into %q: no such ingest table (create it with CREATE TABLE ... USING memory)", name)
	}
	got := ingestSchema(rdr) // read lazily: the router delays the schema
	if got == nil {
		return 0, statusf(codes.InvalidArgument, "ingest into %q: the stream has no schema: %v", name, rdr.Err())
	}
	if err := checkIngestSchema(got, target.Schema()); err != nil {
		return 0, statusf(codes.InvalidArgument, "ingest into %q: %v", name, err)
	}
	return s.appendAll(ctx, name, rdr, mem, target, nil, false)
}

// ingestSchema reads the schema of a DoPut stream whose reader delays it.
// arrow-go reads it outside the recovery its Next has, and panics on a
// first message without an IPC header (a bare descriptor): nil then, and
// rdr.Err says why when it knows.
func ingestSchema(rdr flight.MessageReader) (schema *arrow.Schema) {
	defer func() {
		if recover() != nil {
			schema = nil
		}
	}()
	return rdr.Schema()
}
