package server

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arrowstream/arrowstream/vector"
)

// countSchema is the result of a command sent as a query
// (CommandStatementQuery): one row with the affected row count, as
// notebooks (Python DB-API execute) send DDL.
var countSchema = arrow.NewSchema([]arrow.Field{{Name: "rows_affected", Type: arrow.PrimitiveTypes.Int64}}, nil)

// sqlServer implements flightsql.Server: statements through the
// QueryEngine, prepared statements, catalog metadata and bulk ingest.
// What it does not override answers Unimplemented (BaseServer).
type sqlServer struct {
	flightsql.BaseServer
	s          *Server
	prepared   *preparedStore
	sqlInfoIDs map[uint32]bool // registered GetSqlInfo ids
}

var _ flightsql.Server = (*sqlServer)(nil)

func newSQLServer(s *Server) (*sqlServer, error) {
	q := &sqlServer{s: s, prepared: newPreparedStore(s.cfg.Limits.MaxPreparedStatements, s.cfg.Limits.PreparedStatementIdle).
		withUserBounds(s.cfg.Limits.MaxPreparedStatementsPerUser, s.cfg.Limits.MaxPreparedBytesPerUser)}
	q.Alloc = s.mem
	if err := q.registerSQLInfo(); err != nil {
		return nil, err
	}
	return q, nil
}

// engine returns the query engine, or Unimplemented when none is set.
func (q *sqlServer) engine() (QueryEngine, error) {
	if q.s.cfg.Engine == nil {
		return nil, statusf(codes.Unimplemented, "this server runs no SQL engine")
	}
	return q.s.cfg.Engine, nil
}

// request builds an engine request for the calling user.
func (q *sqlServer) request(ctx context.Context, sql string, params arrow.Record, mem *queryAllocator) Request {
	r := Request{SQL: sql, Params: params, User: UserFromContext(ctx), Mem: q.s.mem, CanRead: q.s.readFilter(ctx),
		Settings: q.s.settings.forCall(ctx)}
	if mem != nil {
		r.Mem = mem
	}
	return r
}

func (q *sqlServer) newAllocator() *queryAllocator {
	a := newQueryAllocator(q.s.mem, q.s.cfg.Limits.QueryMemoryBytes)
	a.label = batchQueryLabel
	a.pool = q.s.pool
	a.ret = q.s.ret
	return a
}

// limitedContext makes a's limit errors cancel the returned context, with
// the error as the cause.
func limitedContext(ctx context.Context, a *queryAllocator) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	a.cancel = cancel
	return ctx, func() { cancel(nil) }
}

// withLimitCause replaces the error of a query that a memory limit stopped
// (its operators return the context's error) by the limit's error.
func withLimitCause(err error, a *queryAllocator) error {
	if err == nil {
		return nil
	}
	if lerr := a.limitErr(); lerr != nil {
		var mle *MemoryLimitError
		if !errors.As(err, &mle) {
			return lerr
		}
	}
	return err
}

// guard runs an engine call, turning a panic (a memory limit, or a bug)
// into an error.
func (q *sqlServer) guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError(what, r)
			if _, ok := err.(*MemoryLimitError); !ok {
				q.s.log.Error("panic in query engine", "call", what, "panic", r, "stack", stack())
			}
		}
	}()
	return f()
}

// prepare describes a statement (with the query timeout applied by the
// caller).
func (q *sqlServer) prepare(ctx context.Context, sql string) (Statement, error) {
	eng, err := q.engine()
	if err != nil {
		return Statement{}, err
	}
	if err := q.s.checkStatement(sql); err != nil {
		return Statement{}, err
	}
	if sub, err := parseSubscribe(sql); err != nil || sub != nil {
		if err != nil {
			return Statement{}, err
		}
		return Statement{}, statusf(codes.InvalidArgument, "SUBSCRIBE cannot be prepared: execute it as a statement (its result never ends)")
	}
	release, err := q.s.admit(ctx)
	if err != nil {
		return Statement{}, err
	}
	defer release()
	var st Statement
	err = q.guard("prepare", func() (err error) {
		st, err = eng.Prepare(ctx, q.request(ctx, sql, nil, nil))
		return err
	})
	if err == nil && st.IsQuery && st.Schema == nil && st.ParameterSchema == nil {
		// A query without parameters must know its schema; plan it.
		st.Schema, err = q.schemaFor(ctx, sql, nil)
	}
	return st, err
}

// schemaFor plans a query for params and returns its schema without
// opening it.
func (q *sqlServer) schemaFor(ctx context.Context, sql string, params arrow.Record) (*arrow.Schema, error) {
	eng, err := q.engine()
	if err != nil {
		return nil, err
	}
	var schema *arrow.Schema
	mem := q.newAllocator()
	err = q.guard("query", func() (err error) {
		schema, _, err = eng.Query(ctx, q.request(ctx, sql, params, mem))
		return err
	})
	q.s.endQuery(mem) // planned only: nothing was opened
	return schema, err
}

// exec runs a command once per parameter row (once without parameters)
// and returns the total affected row count.
func (q *sqlServer) exec(ctx context.Context, sql string, params []arrow.Record) (int64, error) {
	eng, err := q.engine()
	if err != nil {
		return 0, err
	}
	if err := q.s.checkUnrestricted(ctx, firstWords(sql)); err != nil {
		return 0, err
	}
	if err := q.s.checkStatement(sql); err != nil {
		return 0, err
	}
	if err := q.s.pool.admit(); err != nil {
		return 0, err
	}
	release, err := q.s.admit(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	ctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	return q.s.execQuota(ctx, sql, func() (int64, error) {
		var total int64
		err := forEachRow(params, func(row arrow.Record) error {
			return q.guard("exec", func() error {
				mem := q.newAllocator()
				ctx, cancel := limitedContext(ctx, mem)
				defer cancel()
				n, err := eng.Exec(ctx, q.request(ctx, sql, row, mem))
				total += n
				return withLimitCause(err, mem)
			})
		})
		return total, statusOf(q.s.timeoutError(ctx, err), codes.InvalidArgument)
	})
}

// forEachRow calls f with each row of params as a one-row record, or once
// with nil when there are no parameter rows.
func forEachRow(params []arrow.Record, f func(arrow.Record) error) error {
	rows := 0
	for _, p := range params {
		for i := int64(0); i < p.NumRows(); i++ {
			rows++
			row := p.NewSlice(i, i+1)
			err := f(row)
			row.Release()
			if err != nil {
				return err
			}
		}
	}
	if rows == 0 {
		return f(nil)
	}
	return nil
}

// statementTicket wraps a JSON ticket in a Flight SQL TicketStatementQuery.
func statementTicket(tk Ticket) (*flight.Ticket, error) {
	handle, err := tk.Encode()
	if err != nil {
		return nil, err
	}
	b, err := flightsql.CreateStatementQueryTicket(handle)
	if err != nil {
		return nil, err
	}
	return &flight.Ticket{Ticket: b}, nil
}

// statementInfo is the FlightInfo of a statement result.
func (q *sqlServer) statementInfo(schema *arrow.Schema, ticket *flight.Ticket) *flight.FlightInfo {
	// The descriptor is not echoed: it holds the statement, which the
	// ticket already carries (a large statement would travel twice).
	return &flight.FlightInfo{
		Schema:       flight.SerializeSchema(schema, q.s.mem),
		Endpoint:     []*flight.FlightEndpoint{{Ticket: ticket}},
		TotalRecords: -1,
		TotalBytes:   -1,
	}
}

// countInfo runs nothing: it is the FlightInfo of a command's result.
func (q *sqlServer) countInfo(desc *flight.FlightDescriptor, n int64) (*flight.FlightInfo, error) {
	t, err := statementTicket(Ticket{Version: TicketVersion, Count: &n})
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	info := q.statementInfo(countSchema, t)
	info.TotalRecords = 1
	return info, nil
}

// GetFlightInfoStatement plans a query (the ticket carries the SQL; DoGet
// plans it again over fresh snapshots) or runs a command.
func (q *sqlServer) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return nil, statusf(codes.Unimplemented, "transactions are not supported")
	}
	sql := cmd.GetQuery()
	if sub, err := parseSubscribe(sql); err != nil || sub != nil {
		if err != nil {
			return nil, err
		}
		return q.subscribeInfo(ctx, sql, sub)
	}
	qctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	st, err := q.prepare(qctx, sql)
	if err != nil {
		return nil, statusOf(q.s.timeoutError(qctx, err), codes.InvalidArgument)
	}
	if !st.IsQuery {
		n, err := q.exec(ctx, sql, nil)
		if err != nil {
			return nil, err
		}
		return q.countInfo(desc, n)
	}
	if st.ParameterSchema != nil && st.ParameterSchema.NumFields() > 0 {
		return nil, statusf(codes.InvalidArgument, "statement has %d parameters: prepare it and bind values", st.ParameterSchema.NumFields())
	}
	t, err := statementTicket(Ticket{Version: TicketVersion, Query: sql})
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	return q.clusterStatementInfo(ctx, sql, q.statementInfo(st.Schema, t))
}

// GetSchemaStatement returns a statement's result schema without running
// it.
func (q *sqlServer) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if sub, err := parseSubscribe(cmd.GetQuery()); err != nil || sub != nil {
		if err != nil {
			return nil, err
		}
		info, err := q.subscribeInfo(ctx, cmd.GetQuery(), sub)
		if err != nil {
			return nil, err
		}
		return &flight.SchemaResult{Schema: info.Schema}, nil
	}
	ctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	st, err := q.prepare(ctx, cmd.GetQuery())
	if err != nil {
		return nil, statusOf(q.s.timeoutError(ctx, err), codes.InvalidArgument)
	}
	schema := st.Schema
	if !st.IsQuery {
		schema = countSchema
	}
	if schema == nil {
		return nil, statusf(codes.InvalidArgument, "the result schema depends on parameter values: prepare the statement and bind them")
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, q.s.mem)}, nil
}

// DoPutCommandStatementUpdate runs a command (DDL).
func (q *sqlServer) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	if len(cmd.GetTransactionId()) > 0 {
		return 0, statusf(codes.Unimplemented, "transactions are not supported")
	}
	return q.exec(ctx, cmd.GetQuery(), nil)
}

// runQuery plans and streams a query, once per parameter row (params nil:
// once), over snapshots taken when each run opens. It applies the query
// timeout and memory limit.
func (q *sqlServer) runQuery(ctx context.Context, stream flight.FlightService_DoGetServer, sql string, params []arrow.Record) error {
	if sub, err := parseSubscribe(sql); err != nil || sub != nil {
		if err != nil {
			return err
		}
		if params != nil {
			return statusf(codes.InvalidArgument, "SUBSCRIBE takes no parameters")
		}
		return q.runSubscribe(ctx, stream, sql, sub)
	}
	eng, err := q.engine()
	if err != nil {
		return err
	}
	if err := q.s.checkStatement(sql); err != nil {
		return err
	}
	if err := q.s.pool.admit(); err != nil {
		return err
	}
	release, err := q.s.admit(ctx)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	qctx := ctx
	mem := q.newAllocator()
	mem.borrows = true // every way out below ends in endQuery
	ctx, stop := limitedContext(ctx, mem)
	defer stop()
	var rows []arrow.Record
	_ = forEachRow(params, func(row arrow.Record) error {
		if row != nil {
			row.Retain()
			rows = append(rows, row)
		}
		return nil
	})
	if len(rows) == 0 {
		rows = []arrow.Record{nil}
	}
	defer func() {
		for _, r := range rows {
			if r != nil {
				r.Release()
			}
		}
	}()
	open := func(i int) (schema *arrow.Schema, op vector.Operator, err error) {
		err = q.guard("query", func() error {
			var o OpenFunc
			schema, o, err = eng.Query(ctx, q.request(ctx, sql, rows[i], mem))
			if err != nil {
				return err
			}
			op, err = o(ctx)
			return err
		})
		return schema, op, err
	}
	schema, first, err := open(0)
	if err != nil {
		q.s.endQuery(mem) // nothing was opened, or what was is unreachable
		return statusOf(q.s.timeoutError(qctx, withLimitCause(err, mem)), codes.InvalidArgument)
	}
	op := vector.Operator(first)
	if len(rows) > 1 {
		op = &chainOperator{schema: schema, cur: first, n: len(rows), open: open}
	}
	err = withLimitCause(q.s.sendStreamOn(ctx, stream, schema, op, mem), mem)
	q.s.endQuery(mem) // the operators and the stream are closed
	if n := mem.inUse.Load(); n != 0 {
		q.s.log.Warn("query left memory allocated after its stream closed", "bytes", n, "sql", ShortenMessage(sql), "err", err)
	}
	return statusOf(q.s.timeoutError(qctx, err), codes.InvalidArgument)
}

// sendCount streams a command's one-row result.
func (q *sqlServer) sendCount(ctx context.Context, stream flight.FlightService_DoGetServer, n int64) error {
	b := array.NewInt64Builder(q.s.mem)
	defer b.Release()
	b.Append(n)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecord(countSchema, []arrow.Array{col}, 1)
	return statusOf(q.s.sendStream(ctx, stream, countSchema, vector.NewOwnedScan(countSchema, []arrow.Record{rec})), codes.Internal)
}

// doGet serves a Flight SQL ticket (a protobuf Any).
func (q *sqlServer) doGet(ctx context.Context, raw []byte, stream flight.FlightService_DoGetServer) error {
	var anycmd anypb.Any
	if err := proto.Unmarshal(raw, &anycmd); err != nil {
		return statusf(codes.InvalidArgument, "DoGet: ticket is neither a JSON ticket nor a Flight SQL command: %v", err)
	}
	cmd, err := anycmd.UnmarshalNew()
	if err != nil {
		return statusf(codes.InvalidArgument, "DoGet: unknown ticket type %q: %v", anycmd.GetTypeUrl(), err)
	}
	switch cmd := cmd.(type) {
	case *pb.TicketStatementQuery:
		tk, err := decodeTicket(cmd.GetStatementHandle(), q.s.maxTicketBytes())
		if err != nil {
			return statusf(codes.InvalidArgument, "DoGet: statement %v", err)
		}
		switch {
		case tk.Query != "":
			return q.runQuery(withLocal(ctx, tk), stream, tk.Query, nil)
		case tk.Count != nil:
			return q.sendCount(ctx, stream, *tk.Count)
		}
		return statusf(codes.InvalidArgument, "DoGet: a statement ticket must hold a query")
	case *pb.CommandPreparedStatementQuery:
		return q.doGetPrepared(ctx, cmd.GetPreparedStatementHandle(), stream)
	case *pb.CommandGetSqlInfo:
		return q.doGetSQLInfo(ctx, cmd, stream)
	}
	schema, recs, err := q.metadata(ctx, cmd)
	if err != nil {
		return err
	}
	return statusOf(q.s.sendStream(ctx, stream, schema, vector.NewOwnedScan(schema, recs)), codes.Internal)
}

// chainOperator concatenates the runs of a query for several parameter
// rows, opening each run when the previous one ends.
type chainOperator struct {
	schema *arrow.Schema
	cur    vector.Operator
	i, n   int
	open   func(i int) (*arrow.Schema, vector.Operator, error)
}

func (c *chainOperator) Schema() *arrow.Schema { return c.schema }

func (c *chainOperator) Next(ctx context.Context) (arrow.Record, error) {
	for c.cur != nil {
		rec, err := c.cur.Next(ctx)
		if !errors.Is(err, io.EOF) {
			return rec, err
		}
		cerr := c.cur.Close()
		c.cur = nil
		if cerr != nil {
			return nil, cerr
		}
		if c.i++; c.i >= c.n {
			break
		}
		schema, op, err := c.open(c.i)
		if err != nil {
			return nil, err
		}
		c.cur = op
		if !sameShape(schema, c.schema) {
			return nil, statusf(codes.InvalidArgument, "parameter row %d gives columns (%s), row 0 gave (%s)", c.i, describeSchema(schema), describeSchema(c.schema))
		}
	}
	return nil, io.EOF
}

func (c *chainOperator) Close() error {
	if c.cur == nil {
		return nil
	}
	err := c.cur.Close()
	c.cur = nil
	return err
}
