package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// maxParamRows bounds the parameter rows bound to one prepared statement.
const maxParamRows = 1 << 16

// prepared is one open prepared statement. Its handle is random and bound
// to the user who created it.
type prepared struct {
	handle string
	user   string
	sql    string
	st     Statement

	mu       sync.Mutex
	params   []arrow.Record // retained; nil: none bound
	lastUsed time.Time
}

func (p *prepared) setParams(recs []arrow.Record) {
	p.mu.Lock()
	old := p.params
	p.params = recs
	p.mu.Unlock()
	releaseAll(old)
}

// paramsSnapshot returns the bound parameters, retained for the caller.
func (p *prepared) paramsSnapshot() []arrow.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]arrow.Record, len(p.params))
	for i, r := range p.params {
		r.Retain()
		out[i] = r
	}
	return out
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// preparedStore holds the open prepared statements, bounded in number and
// idle time (clients that never close them), and per user in number and
// in the bytes of their SQL text: without the per-user bounds one user
// could take every slot of the server's bound (or hold max × 1 MiB of
// statement text) and refuse prepared statements to everyone else.
type preparedStore struct {
	max     int
	perUser int   // open statements per user (0: no bound)
	bytes   int64 // SQL text bytes per user (0: no bound)
	idle    time.Duration
	now     func() time.Time

	mu        sync.Mutex
	m         map[string]*prepared
	users     map[string]preparedUse
	lastSweep time.Time
}

// preparedUse is what one user's open statements hold.
type preparedUse struct {
	n     int
	bytes int64
}

func newPreparedStore(max int, idle time.Duration) *preparedStore {
	return &preparedStore{max: max, idle: idle, now: time.Now, m: map[string]*prepared{}, users: map[string]preparedUse{}}
}

// withUserBounds sets the per-user bounds (0: none).
func (s *preparedStore) withUserBounds(n int, bytes int64) *preparedStore {
	s.perUser, s.bytes = n, bytes
	return s
}

func (s *preparedStore) add(p *prepared) error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	p.handle = hex.EncodeToString(b)
	now := s.now()
	p.lastUsed = now
	size := int64(len(p.sql))
	s.mu.Lock()
	defer s.mu.Unlock()
	use := s.users[p.user]
	// Sweep idle statements when a bound is reached, and otherwise now and
	// then, so that abandoned ones do not hold their parameters until the
	// store fills.
	full := len(s.m) >= s.max || s.perUser > 0 && use.n >= s.perUser || s.bytes > 0 && use.bytes+size > s.bytes
	if full || now.Sub(s.lastSweep) > s.idle/4 {
		s.expireLocked(now)
		s.lastSweep = now
		use = s.users[p.user]
	}
	switch {
	case s.perUser > 0 && use.n >= s.perUser:
		return statusf(codes.ResourceExhausted, "quota exceeded: user %q holds %d open prepared statements, the most one user may (Limits.MaxPreparedStatementsPerUser, --max-prepared-statements-per-user): close some", p.user, use.n)
	case s.bytes > 0 && use.bytes+size > s.bytes:
		return statusf(codes.ResourceExhausted, "quota exceeded: user %q's open prepared statements hold %d bytes of SQL text; this one's %d would pass the limit of %d bytes (Limits.MaxPreparedBytesPerUser, --max-prepared-bytes-per-user): close some", p.user, use.bytes, size, s.bytes)
	case len(s.m) >= s.max:
		return statusf(codes.ResourceExhausted, "too many open prepared statements (%d, the server's limit: Limits.MaxPreparedStatements, --max-prepared-statements): close some", s.max)
	}
	s.m[p.handle] = p
	s.users[p.user] = preparedUse{n: use.n + 1, bytes: use.bytes + size}
	return nil
}

// forgetLocked removes a statement from the map and its user's use.
func (s *preparedStore) forgetLocked(p *prepared) {
	if _, ok := s.m[p.handle]; !ok {
		return
	}
	delete(s.m, p.handle)
	use := s.users[p.user]
	use.n--
	use.bytes -= int64(len(p.sql))
	if use.n <= 0 {
		delete(s.users, p.user)
	} else {
		s.users[p.user] = use
	}
}

func (s *preparedStore) expireLocked(now time.Time) {
	for _, p := range s.m {
		p.mu.Lock()
		idle := now.Sub(p.lastUsed) > s.idle
		p.mu.Unlock()
		if idle {
			s.forgetLocked(p)
			p.setParams(nil)
		}
	}
}

// get returns the statement of a handle if the user owns it.
func (s *preparedStore) get(handle []byte, user string) (*prepared, error) {
	now := s.now()
	s.mu.Lock()
	p, ok := s.m[string(handle)]
	s.mu.Unlock()
	if !ok || p.user != user {
		return nil, statusf(codes.NotFound, "prepared statement %q does not exist (closed, expired after %s idle, or created by another user)", excerpt(handle), s.idle)
	}
	p.mu.Lock()
	p.lastUsed = now
	p.mu.Unlock()
	return p, nil
}

func (s *preparedStore) remove(handle []byte, user string) error {
	p, err := s.get(handle, user)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.forgetLocked(p)
	s.mu.Unlock()
	p.setParams(nil)
	return nil
}

func (s *preparedStore) closeAll() {
	s.mu.Lock()
	m := s.m
	s.m = map[string]*prepared{}
	s.users = map[string]preparedUse{}
	s.mu.Unlock()
	for _, p := range m {
		p.setParams(nil)
	}
}

func (s *preparedStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// CreatePreparedStatement analyzes a statement and keeps it under a new
// handle.
func (q *sqlServer) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	if len(req.GetTransactionId()) > 0 {
		return res, statusf(codes.Unimplemented, "transactions are not supported")
	}
	qctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	st, err := q.prepare(qctx, req.GetQuery())
	if err != nil {
		return res, statusOf(q.s.timeoutError(qctx, err), codes.InvalidArgument)
	}
	p := &prepared{user: UserFromContext(ctx), sql: req.GetQuery(), st: st}
	if err := q.prepared.add(p); err != nil {
		return res, statusOf(err, codes.Internal)
	}
	res.Handle = []byte(p.handle)
	res.ParameterSchema = st.ParameterSchema
	if st.IsQuery {
		res.DatasetSchema = st.Schema
	} else {
		res.DatasetSchema = countSchema
	}
	return res, nil
}

// ClosePreparedStatement forgets a handle and its bound parameters.
func (q *sqlServer) ClosePreparedStatement(ctx context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	return q.prepared.remove(req.GetPreparedStatementHandle(), UserFromContext(ctx))
}

// DoPutPreparedStatementQuery binds parameter values (every row of the
// batches sent; the statement runs once per row).
func (q *sqlServer) DoPutPreparedStatementQuery(ctx context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := q.prepared.get(cmd.GetPreparedStatementHandle(), UserFromContext(ctx))
	if err != nil {
		return nil, err
	}
	recs, err := readParams(rdr, p.st.ParameterSchema)
	if err != nil {
		return nil, err
	}
	p.setParams(recs)
	return []byte(p.handle), nil
}

// readParams reads the parameter batches of a DoPut, checking them
// against the statement's parameter schema when it has one.
func readParams(rdr flight.MessageReader, want *arrow.Schema) ([]arrow.Record, error) {
	var recs []arrow.Record
	rows := int64(0)
	for rdr.Next() {
		rec := rdr.Record()
		if rec.NumRows() == 0 {
			continue
		}
		if want != nil && rec.NumCols() != int64(want.NumFields()) {
			releaseAll(recs)
			return nil, statusf(codes.InvalidArgument, "bound %d parameter columns (%s); the statement has %d parameters (%s)",
				rec.NumCols(), describeSchema(rec.Schema()), want.NumFields(), describeSchema(want))
		}
		if err := validateRecord(rec); err != nil {
			releaseAll(recs)
			return nil, statusf(codes.InvalidArgument, "bound parameters: batch %d is malformed: %v", len(recs), err)
		}
		if rows += rec.NumRows(); rows > maxParamRows {
			releaseAll(recs)
			return nil, statusf(codes.InvalidArgument, "more than %d parameter rows bound", maxParamRows)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		releaseAll(recs)
		return nil, statusf(codes.InvalidArgument, "read parameters: %v", err)
	}
	return recs, nil
}

// checkBound fails when a statement with parameters has none bound.
func checkBound(p *prepared, params []arrow.Record) error {
	if p.st.ParameterSchema == nil || p.st.ParameterSchema.NumFields() == 0 || len(params) > 0 {
		return nil
	}
	return statusf(codes.InvalidArgument, "prepared statement has %d parameters (%s) but no values are bound",
		p.st.ParameterSchema.NumFields(), describeSchema(p.st.ParameterSchema))
}

// GetFlightInfoPreparedStatement describes the result of executing a
// prepared query (DoGet runs it with the parameters bound at that time);
// a prepared command runs now.
func (q *sqlServer) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := q.prepared.get(cmd.GetPreparedStatementHandle(), UserFromContext(ctx))
	if err != nil {
		return nil, err
	}
	params := p.paramsSnapshot()
	defer releaseAll(params)
	if err := checkBound(p, params); err != nil {
		return nil, err
	}
	if !p.st.IsQuery {
		n, err := q.exec(ctx, p.sql, params)
		if err != nil {
			return nil, err
		}
		return q.countInfo(desc, n)
	}
	schema, err := q.preparedSchema(ctx, p, params)
	if err != nil {
		return nil, err
	}
	ticket, err := preparedTicket(p.handle)
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	return q.statementInfo(schema, ticket), nil
}

// GetSchemaPreparedStatement returns the result schema of a prepared
// statement.
func (q *sqlServer) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, err := q.prepared.get(cmd.GetPreparedStatementHandle(), UserFromContext(ctx))
	if err != nil {
		return nil, err
	}
	if !p.st.IsQuery {
		return &flight.SchemaResult{Schema: flight.SerializeSchema(countSchema, q.s.mem)}, nil
	}
	params := p.paramsSnapshot()
	defer releaseAll(params)
	schema, err := q.preparedSchema(ctx, p, params)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(schema, q.s.mem)}, nil
}

// preparedSchema is the statement's schema, planned with the first bound
// parameter row when it depends on them.
func (q *sqlServer) preparedSchema(ctx context.Context, p *prepared, params []arrow.Record) (*arrow.Schema, error) {
	if p.st.Schema != nil {
		return p.st.Schema, nil
	}
	var first arrow.Record
	if len(params) > 0 {
		first = params[0].NewSlice(0, 1)
		defer first.Release()
	}
	ctx, cancel := q.s.queryContext(ctx)
	defer cancel()
	schema, err := q.schemaFor(ctx, p.sql, first)
	return schema, statusOf(q.s.timeoutError(ctx, err), codes.InvalidArgument)
}

// preparedTicket is a Flight SQL ticket naming a prepared statement.
func preparedTicket(handle string) (*flight.Ticket, error) {
	var a anypb.Any
	if err := a.MarshalFrom(&pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte(handle)}); err != nil {
		return nil, err
	}
	b, err := proto.Marshal(&a)
	if err != nil {
		return nil, err
	}
	return &flight.Ticket{Ticket: b}, nil
}

// doGetPrepared runs a prepared query with its bound parameters.
func (q *sqlServer) doGetPrepared(ctx context.Context, handle []byte, stream flight.FlightService_DoGetServer) error {
	p, err := q.prepared.get(handle, UserFromContext(ctx))
	if err != nil {
		return err
	}
	params := p.paramsSnapshot()
	defer releaseAll(params)
	if err := checkBound(p, params); err != nil {
		return err
	}
	if !p.st.IsQuery {
		return statusf(codes.InvalidArgument, "prepared statement is a command, not a query: execute it as an update")
	}
	return q.runQuery(ctx, stream, p.sql, params)
}

// DoPutPreparedStatementUpdate runs a prepared command, once per bound
// parameter row (the rows sent with this call, else those bound before).
func (q *sqlServer) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	p, err := q.prepared.get(cmd.GetPreparedStatementHandle(), UserFromContext(ctx))
	if err != nil {
		return 0, err
	}
	params, err := readParams(rdr, p.st.ParameterSchema)
	if err != nil {
		return 0, err
	}
	if len(params) == 0 {
		params = p.paramsSnapshot()
	}
	defer releaseAll(params)
	if err := checkBound(p, params); err != nil {
		return 0, err
	}
	if p.st.IsQuery {
		return 0, statusf(codes.InvalidArgument, "prepared statement is a query, not a command: execute it as a query")
	}
	return q.exec(ctx, p.sql, params)
}
