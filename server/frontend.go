package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Frontend is a Server's session engine as another wire protocol (the
// PostgreSQL endpoint, server/pgwire) uses it: the same query engine,
// users, read grants, quotas, statement and memory limits and query
// timeout as Flight SQL, so that a second protocol is a second front end
// and not a second engine. Safe for concurrent use.
type Frontend struct{ s *Server }

// Frontend returns the server's session engine for other wire protocols.
func (s *Server) Frontend() *Frontend { return &Frontend{s: s} }

// Logger is the server's logger.
func (f *Frontend) Logger() *slog.Logger { return f.s.log }

// AuthRequired reports whether clients must log in.
func (f *Frontend) AuthRequired() bool { return f.s.auth != nil }

// TLSConfig is the server's TLS configuration (its certificate, and client
// CA when mutual TLS is on), or nil when TLS is off.
func (f *Frontend) TLSConfig() (*tls.Config, error) {
	if !f.s.cfg.TLS.enabled() {
		return nil, nil
	}
	return loadTLS(f.s.cfg.TLS)
}

// StallTimeout is how long a result stream may wait on a client that
// reads nothing (negative: forever).
func (f *Frontend) StallTimeout() time.Duration { return f.s.cfg.Limits.StallTimeout }

// MaxStatementBytes is the longest statement accepted (0: no bound).
func (f *Frontend) MaxStatementBytes() int { return f.s.cfg.Limits.MaxStatementBytes }

// CheckPassword verifies a user's password as a Flight Handshake does (the
// same users and the same bound on concurrent checks). The error does not
// say whether the user exists.
func (f *Frontend) CheckPassword(ctx context.Context, user, password string) error {
	a := f.s.auth
	if a == nil {
		return nil
	}
	select {
	case a.logins <- struct{}{}:
		defer func() { <-a.logins }()
	case <-ctx.Done():
		return ctx.Err()
	}
	c, ok := a.users[user]
	if !ok {
		c = a.dummy
	}
	if !c.matches(password) || !ok {
		a.log.Warn("login failed", "user", LogName(user), "protocol", "postgres")
		return ErrBadLogin
	}
	return nil
}

// ErrBadLogin is a wrong user name or password.
var ErrBadLogin = errors.New("invalid user name or password")

// SCRAMSecret returns the SCRAM-SHA-256 secret of user. For an unknown
// user (or one whose stored hash gives none) it returns a decoy whose salt
// depends only on the name, so that the exchange does not tell who exists,
// and false.
func (f *Frontend) SCRAMSecret(user string) (*SCRAMSecret, bool) {
	if a := f.s.auth; a != nil {
		if c, ok := a.users[user]; ok && c.scram != nil {
			return c.scram, true
		}
	}
	salt := sha256.Sum256([]byte("arrowstream decoy salt\x00" + user))
	return &SCRAMSecret{Salt: salt[:16], Iterations: scramPlainIterations,
		StoredKey: make([]byte, scramKeyBytes), ServerKey: make([]byte, scramKeyBytes)}, false
}

// NewSession opens a client session of user ("" without authentication):
// its SETs apply to its own statements.
func (f *Frontend) NewSession(user string) *FrontendSession {
	return &FrontendSession{f: f, user: user, settings: &Settings{}}
}

// FrontendSession is one client connection of another protocol.
type FrontendSession struct {
	f        *Frontend
	user     string
	settings *Settings
	overlay  plan.Catalog
}

// SetCatalog makes the session's statements resolve table names in c
// before the engine's catalog (the PostgreSQL endpoint's pg_catalog).
// c must be safe for concurrent use and show only what the user may see.
func (fs *FrontendSession) SetCatalog(c plan.Catalog) { fs.overlay = c }

// User is the session's user.
func (fs *FrontendSession) User() string { return fs.user }

// Settings are the session's SET values.
func (fs *FrontendSession) Settings() *Settings { return fs.settings }

func (fs *FrontendSession) withUser(ctx context.Context) context.Context {
	return context.WithValue(ctx, userKey{}, fs.user)
}

// request is the engine request of a statement of this session.
func (fs *FrontendSession) request(ctx context.Context, sql string, params arrow.Record, mem *queryAllocator) Request {
	s := fs.f.s
	r := Request{SQL: sql, Params: params, User: fs.user, Mem: s.mem, CanRead: s.grants.filter(fs.user), Settings: fs.settings, Overlay: fs.overlay}
	if mem != nil {
		r.Mem = mem
	}
	return r
}

// MayRead reports whether the session's user may read (and see) table.
func (fs *FrontendSession) MayRead(table string) bool {
	can := fs.f.s.grants.filter(fs.user)
	return can == nil || can(table)
}

// Tables lists the tables the session's user may see (as Flight SQL's
// GetTables does), sorted by schema and name.
func (fs *FrontendSession) Tables(ctx context.Context) ([]TableInfo, error) {
	return fs.f.s.allTables(fs.withUser(ctx))
}

// Describe parses and analyzes a statement without running it: whether it
// returns rows, and their schema.
func (fs *FrontendSession) Describe(ctx context.Context, sql string) (Statement, error) {
	return fs.DescribeParams(ctx, sql, nil)
}

// DescribeParams is Describe with the statement's $n placeholders bound
// to params (one row, a column per placeholder; NULLs of the parameters'
// types describe a statement before its values are known).
func (fs *FrontendSession) DescribeParams(ctx context.Context, sql string, params arrow.Record) (Statement, error) {
	ctx = fs.withUser(ctx)
	q := fs.f.s.sql
	ctx, cancel := fs.f.s.queryContext(ctx)
	defer cancel()
	eng, err := q.engine()
	if err != nil {
		return Statement{}, err
	}
	if err := fs.f.s.checkStatement(sql); err != nil {
		return Statement{}, err
	}
	release, err := fs.f.s.admit(ctx)
	if err != nil {
		return Statement{}, err
	}
	defer release()
	var st Statement
	err = q.guard("prepare", func() (err error) {
		st, err = eng.Prepare(ctx, fs.request(ctx, sql, params, nil))
		return err
	})
	if err == nil && st.IsQuery && st.Schema == nil {
		mem := q.newAllocator()
		err = q.guard("query", func() (err error) {
			st.Schema, _, err = eng.Query(ctx, fs.request(ctx, sql, params, mem))
			return err
		})
		fs.f.s.endQuery(mem) // planned only: nothing was opened
	}
	return st, fs.f.s.timeoutError(ctx, err)
}

// Exec runs a command (DDL) with the quotas and grants Flight SQL applies.
func (fs *FrontendSession) Exec(ctx context.Context, sql string) (int64, error) {
	ctx = fs.withUser(ctx)
	n, err := fs.f.s.sql.exec(ctx, sql, nil)
	return n, err
}

// Query plans and opens a query over fresh snapshots, under the query
// timeout and memory limit, holding one of the user's concurrent-query
// slots until the Rows are closed. The caller must Close the Rows.
func (fs *FrontendSession) Query(ctx context.Context, sql string) (*Rows, error) {
	return fs.QueryParams(ctx, sql, nil)
}

// QueryParams is Query with the statement's $n placeholders bound to
// params (one row, a column per placeholder), borrowed for the call.
func (fs *FrontendSession) QueryParams(ctx context.Context, sql string, params arrow.Record) (_ *Rows, err error) {
	s := fs.f.s
	q := s.sql
	ctx = fs.withUser(ctx)
	eng, err := q.engine()
	if err != nil {
		return nil, err
	}
	if err := s.checkStatement(sql); err != nil {
		return nil, err
	}
	if err := s.pool.admit(); err != nil {
		return nil, err
	}
	release, err := s.admit(ctx)
	if err != nil {
		return nil, err
	}
	r := &Rows{s: s, release: release}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	var cancelTimeout context.CancelFunc
	r.qctx, cancelTimeout = s.queryContext(ctx)
	r.mem = q.newAllocator()
	r.mem.borrows = true // Close ends the query in endQuery
	var stop context.CancelFunc
	r.ctx, stop = limitedContext(r.qctx, r.mem)
	r.cancel = func() { stop(); cancelTimeout() }
	err = q.guard("query", func() error {
		var open OpenFunc
		r.schema, open, err = eng.Query(r.ctx, fs.request(r.ctx, sql, params, r.mem))
		if err != nil {
			return err
		}
		r.op, err = open(r.ctx)
		return err
	})
	if err != nil {
		return nil, r.fail(err)
	}
	return r, nil
}

// Rows is an open query result: record batches pulled one at a time from
// the operator over the snapshots, so that a slow reader holds back the
// query instead of buffering its result.
type Rows struct {
	s       *Server
	schema  *arrow.Schema
	op      vector.Operator
	mem     *queryAllocator
	ctx     context.Context // the query's (timeout, memory limit)
	qctx    context.Context // with the timeout only
	cancel  context.CancelFunc
	release func()
	closed  bool
}

// Schema is the result schema.
func (r *Rows) Schema() *arrow.Schema { return r.schema }

// Next returns the next record batch (owned by the caller, who releases
// it before Close) or io.EOF. It
// stops when ctx or the query's own context (timeout, memory limit) ends.
func (r *Rows) Next(ctx context.Context) (rec arrow.Record, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, r.cancel)
	defer stop()
	err = r.s.sql.guard("query", func() (err error) {
		rec, err = r.op.Next(r.ctx)
		return err
	})
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return rec, r.fail(err)
}

// fail gives a query's error its cause: the memory limit or the timeout.
func (r *Rows) fail(err error) error {
	if err == nil {
		return nil
	}
	return r.s.timeoutError(r.qctx, withLimitCause(err, r.mem))
}

// Close ends the query, releasing its snapshots and its slot.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.op != nil {
		err = r.op.Close()
	}
	if r.cancel != nil {
		r.cancel()
	}
	if r.release != nil {
		r.release()
	}
	if r.mem != nil {
		// The operators are closed, and the caller released the records
		// Next gave it before closing (see Next).
		r.s.endQuery(r.mem)
		if n := r.mem.inUse.Load(); n != 0 {
			r.s.log.Warn("query left memory allocated after its result closed", "bytes", n)
		}
	}
	return err
}

// StatusCode is the gRPC code an error of the server carries (Unknown for
// an error without one); other protocols map it onto their own codes.
func StatusCode(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}
