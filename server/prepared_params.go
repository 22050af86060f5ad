package server

import (
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// preparedStatementQuery returns the Flight SQL prepared-statement query
// command a DoPut descriptor carries (binding parameters), if that is
// what it carries.
func preparedStatementQuery(cmd []byte) (*pb.CommandPreparedStatementQuery, bool) {
	var a anypb.Any
	if proto.Unmarshal(cmd, &a) != nil {
		return nil, false
	}
	var q pb.CommandPreparedStatementQuery
	if !a.MessageIs(&q) || a.UnmarshalTo(&q) != nil {
		return nil, false
	}
	return &q, true
}

// bindParams serves a DoPut of CommandPreparedStatementQuery (parameter
// batches for a prepared statement) as bulk ingest is served: the batches
// are decoded on an allocator of their own that counts in the server's
// memory pool for as long as they stay bound, and each batch's decoding is
// held against the per-query limit, so that one huge parameter batch is
// refused naming the limit. arrow-go's router would decode them on the
// server's one allocator, where neither limit sees them. The answer is the
// router's: a DoPutPreparedStatementResult with the handle.
func (s *Server) bindParams(stream flight.FlightService_DoPutServer, cmd *pb.CommandPreparedStatementQuery) error {
	if err := s.pool.admit(); err != nil {
		return err
	}
	mem := &ingestAllocator{parent: s.mem, pool: s.pool}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem), ipc.WithDelayReadSchema(true))
	if err != nil {
		return statusf(codes.InvalidArgument, "bind parameters: read the stream: %v", err)
	}
	defer rdr.Release()
	checked := &paramReader{Reader: rdr, mem: mem, limit: s.cfg.Limits.QueryMemoryBytes}
	handle, err := s.sql.DoPutPreparedStatementQuery(stream.Context(), cmd, checked, nil)
	if checked.err != nil {
		return checked.err // the limit's own status, not a read error
	}
	if err != nil {
		return err
	}
	meta, err := proto.Marshal(&pb.DoPutPreparedStatementResult{PreparedStatementHandle: handle})
	if err != nil {
		return statusOf(err, codes.Internal)
	}
	return stream.Send(&flight.PutResult{AppMetadata: meta})
}

// paramReader is a DoPut's record reader that ends the stream with a
// ResourceExhausted error when a batch decoded to more than the per-query
// memory limit (0: none).
type paramReader struct {
	*flight.Reader
	mem   *ingestAllocator
	limit int64
	batch int
	err   error
}

// Next reads the next batch and checks what decoding it took.
func (r *paramReader) Next() bool {
	if r.err != nil || !r.Reader.Next() {
		return false
	}
	n := r.mem.batch.Swap(0)
	if r.limit > 0 && n > r.limit {
		r.err = statusf(codes.ResourceExhausted, "RESOURCE_EXHAUSTED: bind parameters: batch %d decodes to %d bytes, over the per-query memory limit of %d bytes (QueryMemoryBytes, --query-memory): no parameters were bound; bind fewer rows per batch", r.batch, n, r.limit)
		return false
	}
	r.batch++
	return true
}

// Err returns the limit error, else the stream's.
func (r *paramReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Reader.Err()
}
