package server

import (
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// statementIngest returns the Flight SQL bulk-ingest command a DoPut
// descriptor carries, if that is what it carries.
func statementIngest(cmd []byte) (*pb.CommandStatementIngest, bool) {
	var a anypb.Any
	if proto.Unmarshal(cmd, &a) != nil {
		return nil, false
	}
	var ingest pb.CommandStatementIngest
	if !a.MessageIs(&ingest) || a.UnmarshalTo(&ingest) != nil {
		return nil, false
	}
	return &ingest, true
}

// sqlIngest serves Flight SQL's CommandStatementIngest (ADBC's bulk
// ingest) as the plain-Flight DoPut is served: the stream's batches are
// decoded on an allocator of its own that counts in the server's memory
// pool and holds each batch against the per-query limit. arrow-go's
// router would decode them on the server's one allocator, where neither
// limit sees them. As the router does, the rows appended are reported in
// a DoPutUpdateResult even when the stream then fails.
func (s *Server) sqlIngest(stream flight.FlightService_DoPutServer, cmd *pb.CommandStatementIngest) error {
	if err := s.pool.admit(); err != nil {
		return err
	}
	mem := &ingestAllocator{parent: s.mem, pool: s.pool}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem), ipc.WithDelayReadSchema(true))
	if err != nil {
		return statusf(codes.InvalidArgument, "ingest into %q: read the stream: %v", cmd.GetTable(), err)
	}
	defer rdr.Release()
	rows, ingestErr := s.sql.ingest(stream.Context(), cmd, rdr, mem)
	meta, err := proto.Marshal(&pb.DoPutUpdateResult{RecordCount: rows})
	if err != nil {
		return statusOf(err, codes.Internal)
	}
	if err := stream.Send(&flight.PutResult{AppMetadata: meta}); err != nil {
		return err
	}
	return ingestErr
}
