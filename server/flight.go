package server

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// service is the Flight service the gRPC server registers: plain Flight
// over the memory-sink tables, and Flight SQL through arrow-go's router
// (flightsql.NewFlightServer), which it embeds. It takes over the calls the
// router cannot serve well: DoGet (arrow-go's takes no IPC options and
// leaks its producer goroutine when a client goes away; ours streams on
// the call's goroutine), the plain-Flight forms of GetFlightInfo, GetSchema
// and DoPut, ListFlights and Handshake. The sqlServer's channel-based
// DoGet* methods are therefore never called.
type service struct {
	flight.FlightServer
	s *Server
}

// Handshake exchanges basic credentials for a bearer token; without
// authentication it succeeds with no token.
func (v *service) Handshake(stream flight.FlightService_HandshakeServer) error {
	if v.s.auth == nil {
		return nil
	}
	return v.s.auth.handshake(stream)
}

// ListFlights lists one flight per memory-sink table whose name matches
// the criteria's expression, read as a SQL LIKE pattern (empty: all).
func (v *service) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	pattern := string(c.GetExpression())
	for _, name := range v.s.cfg.Sinks.List() {
		if err := stream.Context().Err(); err != nil {
			return err
		}
		if pattern != "" && !likeMatch(pattern, name, true) || !v.s.mayRead(stream.Context(), name) {
			continue
		}
		info, err := v.s.tableFlightInfo(stream.Context(), Ticket{Version: TicketVersion, Table: name},
			&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}})
		if err != nil {
			err = statusOf(err, codes.Internal)
			if status.Code(err) == codes.NotFound {
				continue // dropped while listing
			}
			return err
		}
		if err := stream.Send(info); err != nil {
			return err
		}
	}
	return nil
}

// GetFlightInfo describes a table (PATH descriptor [table], or a CMD
// descriptor holding a JSON ticket) or routes a Flight SQL command.
func (v *service) GetFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	tk, ok, err := plainTicket(desc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return v.FlightServer.GetFlightInfo(ctx, desc)
	}
	info, err := v.s.tableFlightInfo(ctx, tk, desc)
	return info, statusOf(err, codes.Internal)
}

// GetSchema is GetFlightInfo's schema alone.
func (v *service) GetSchema(ctx context.Context, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	tk, ok, err := plainTicket(desc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return v.FlightServer.GetSchema(ctx, desc)
	}
	snap, schema, err := v.s.openTable(ctx, tk)
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	defer snap.Release()
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, v.s.mem)}, nil
}

// DoGet streams a table ticket, a JSON statement ticket, or a Flight SQL
// ticket.
func (v *service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	release, err := v.s.acquireStream()
	if err != nil {
		return err
	}
	defer release()
	ctx := stream.Context()
	if !IsTicket(t.GetTicket()) {
		return v.s.sql.doGet(ctx, t.GetTicket(), stream)
	}
	tk, err := DecodeTicket(t.GetTicket())
	if err != nil {
		return statusf(codes.InvalidArgument, "DoGet: %v", err)
	}
	switch {
	case tk.Query != "":
		return v.s.sql.runQuery(withLocal(ctx, tk), stream, tk.Query, nil)
	case tk.Count != nil:
		return v.s.sql.sendCount(ctx, stream, *tk.Count)
	}
	snap, schema, err := v.s.openTable(ctx, tk)
	if err != nil {
		return statusOf(err, codes.Internal)
	}
	// The read is a query of its own: what it allocates (epoch columns,
	// compressed bodies) is accounted and bounded as a SQL query's is.
	mem := v.s.sql.newAllocator()
	mem.borrows = true // ended by endQuery below
	ctx, stop := limitedContext(ctx, mem)
	defer stop()
	raw, err := memsink.NewSnapshotScan(snap, wantsEpochColumns(tk), mem)
	if err != nil {
		return statusOf(err, codes.Internal)
	}
	op := vector.BorrowScan(mem, raw)
	err = withLimitCause(v.s.sendStreamOn(ctx, stream, schema, op, mem), mem)
	v.s.endQuery(mem)
	return statusOf(err, codes.Internal)
}

// DoPut ingests into a table named by a PATH descriptor, or routes a
// Flight SQL command (statement updates, prepared-statement parameters,
// bulk ingest).
func (v *service) DoPut(stream flight.FlightService_DoPutServer) error {
	release, err := v.s.acquireStream()
	if err != nil {
		return err
	}
	defer release()
	stream = &checkedPut{FlightService_DoPutServer: stream}
	first, err := stream.Recv()
	if err != nil {
		return statusOf(err, codes.InvalidArgument) // a transport error keeps its status
	}
	desc := first.GetFlightDescriptor()
	if desc == nil {
		return statusf(codes.InvalidArgument, "DoPut: the first message carries no flight descriptor")
	}
	if desc.Type == flight.DescriptorPATH {
		if len(desc.Path) != 1 {
			return statusf(codes.InvalidArgument, "DoPut: path descriptor %q: want one element, the table name", desc.Path)
		}
		_, err := v.s.ingest(stream.Context(), desc.Path[0], &peekedPut{FlightService_DoPutServer: stream, first: first}, true)
		return err
	}
	if IsTicket(desc.Cmd) {
		return statusf(codes.InvalidArgument, "DoPut: a JSON ticket cannot be a DoPut command; use a path descriptor naming the table")
	}
	if cmd, ok := statementIngest(desc.Cmd); ok {
		return v.s.sqlIngest(&peekedPut{FlightService_DoPutServer: stream, first: first}, cmd)
	}
	if cmd, ok := preparedStatementQuery(desc.Cmd); ok {
		return v.s.bindParams(&peekedPut{FlightService_DoPutServer: stream, first: first}, cmd)
	}
	return v.FlightServer.DoPut(&peekedPut{FlightService_DoPutServer: stream, first: first})
}

// peekedPut replays the first message of a DoPut stream that was read to
// look at its descriptor.
type peekedPut struct {
	flight.FlightService_DoPutServer
	first *flight.FlightData
}

func (p *peekedPut) Recv() (*flight.FlightData, error) {
	if f := p.first; f != nil {
		p.first = nil
		return f, nil
	}
	return p.FlightService_DoPutServer.Recv()
}

// checkedPut checks the IPC metadata of every message a client pushes
// (ipcStreamCheck) before a reader decodes it; a bad message ends the
// stream (the reader's error, which the calls report as InvalidArgument).
type checkedPut struct {
	flight.FlightService_DoPutServer
	check ipcStreamCheck
	n     int
}

func (c *checkedPut) Recv() (*flight.FlightData, error) {
	d, err := c.FlightService_DoPutServer.Recv()
	if err != nil {
		return d, err
	}
	c.n++
	if c.n > 1 && len(d.GetDataHeader()) == 0 {
		// Only the first message may be a bare descriptor; arrow-go's
		// reader indexes a missing header and panics.
		return nil, fmt.Errorf("DoPut message %d has no IPC data header", c.n)
	}
	if err := c.check.check(d.GetDataHeader(), d.GetDataBody()); err != nil {
		return nil, fmt.Errorf("DoPut message %d: %w", c.n, err)
	}
	return d, nil
}

// plainTicket returns the table ticket a descriptor names: a PATH of one
// element, or a CMD holding a JSON ticket. ok is false for Flight SQL
// commands.
func plainTicket(desc *flight.FlightDescriptor) (Ticket, bool, error) {
	switch {
	case desc == nil:
		return Ticket{}, false, statusf(codes.InvalidArgument, "no flight descriptor")
	case desc.Type == flight.DescriptorPATH:
		if len(desc.Path) != 1 || desc.Path[0] == "" {
			return Ticket{}, false, statusf(codes.InvalidArgument,
				"path descriptor %q: want one element, the table name (use a CMD descriptor holding a JSON ticket to read by epoch)", desc.Path)
		}
		return Ticket{Version: TicketVersion, Table: desc.Path[0]}, true, nil
	case IsTicket(desc.Cmd):
		tk, err := DecodeTicket(desc.Cmd)
		if err != nil {
			return Ticket{}, false, statusf(codes.InvalidArgument, "descriptor: %v", err)
		}
		if tk.Table == "" {
			return Ticket{}, false, statusf(codes.InvalidArgument, "descriptor: only table tickets can be described; send SQL as a Flight SQL CommandStatementQuery")
		}
		return tk, true, nil
	}
	return Ticket{}, false, nil
}

func wantsEpochColumns(tk Ticket) bool { return tk.WithEpoch || tk.Since != nil }

// openTable takes the snapshot a table ticket names and returns it with
// the stream's schema (epoch columns as asked, the snapshot's latest epoch
// in the metadata). The caller releases the snapshot.
func (s *Server) openTable(ctx context.Context, tk Ticket) (*memsink.Snapshot, *arrow.Schema, error) {
	t, ok := s.cfg.Sinks.Lookup(tk.Table)
	if !ok || !s.mayRead(ctx, tk.Table) {
		return nil, nil, statusf(codes.NotFound, "table %q does not exist", tk.Table)
	}
	var snap *memsink.Snapshot
	var err error
	switch {
	case tk.Epoch != nil:
		snap, err = t.AsOf(*tk.Epoch)
	case tk.Since != nil:
		snap, err = t.Since(*tk.Since)
	default:
		snap = t.Snapshot()
	}
	if err != nil {
		return nil, nil, err
	}
	schema := snap.Schema()
	if wantsEpochColumns(tk) {
		schema = memsink.WithEpochSchema(schema)
	}
	return snap, withEpochMetadata(schema, snap.LatestEpoch()), nil
}

// withEpochMetadata adds EpochMetadataKey to a schema's metadata.
func withEpochMetadata(schema *arrow.Schema, epoch int64) *arrow.Schema {
	md := schema.Metadata()
	keys := append([]string{}, md.Keys()...)
	vals := append([]string{}, md.Values()...)
	keys = append(keys, EpochMetadataKey)
	vals = append(vals, strconv.FormatInt(epoch, 10))
	m := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(schema.Fields(), &m)
}

// tableFlightInfo describes the snapshot a ticket names: schema, rows and
// bytes, and one endpoint whose ticket reads it again (at that time, the
// current snapshot: counts describe the moment of the call).
func (s *Server) tableFlightInfo(ctx context.Context, tk Ticket, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	snap, schema, err := s.openTable(ctx, tk)
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	ticket, err := tk.Encode()
	if err != nil {
		return nil, err
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		TotalRecords:     snap.NumRows(),
		TotalBytes:       snap.NumBytes(),
		Ordered:          true,
	}
	// A table ticket reads the local sink: a cluster table's FlightInfo
	// has one endpoint per instance (cluster.go).
	return s.clusterEndpoints(ctx, tk.Table, info, &flight.Ticket{Ticket: ticket})
}
