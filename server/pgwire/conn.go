package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/arrowstream/arrowstream/server"
)

// flushBytes is the output buffered before it is written: rows are sent
// in writes of about this size, and a write that blocks (a slow client)
// stops the query's pull until the client reads.
const flushBytes = 64 << 10

// conn is one client connection. Its messages are handled in order on
// its own goroutine; only cancelStatement and kill are called from
// others.
type conn struct {
	srv    *Server
	nc     net.Conn
	rd     *connReader // what the protocol reader reads (c.nc, after a watcher's bytes)
	be     *pgproto3.Backend
	out    []byte
	pid    uint32
	secret uint32
	isTLS  bool
	// slotUser is the user whose per-user connection slot this connection
	// holds ("" before login), given back on close.
	slotUser string

	sess   *server.FrontendSession
	params map[string]string // the session's PostgreSQL parameters
	opts   encodeOpts
	// dialect translates the session's PostgreSQL into the dialect.
	dialect dialect
	// stmtTimeout is statement_timeout (0: none).
	stmtTimeout time.Duration
	txn         byte // ReadyForQuery status: 'I', 'T' or 'E'

	stmts   map[string]*prepared
	portals map[string]*portal
	// held is what stmts and portals hold (their text and bound values),
	// bounded by Config.MaxPreparedBytes.
	held  int64
	types *pgtype.Map

	mu     sync.Mutex
	cancel context.CancelFunc // of the running statement, nil between statements
	// canceled: a CancelRequest came for the statement in progress; it
	// fails with 57014 at its next step. Cleared at ReadyForQuery.
	canceled  bool
	executing bool // a query is being opened or read (tests)
	killed    bool
	baseCtx   context.Context
	stop      context.CancelFunc
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, stop := context.WithCancel(context.Background())
	return &conn{srv: s, nc: nc, txn: 'I', stmts: map[string]*prepared{}, portals: map[string]*portal{},
		baseCtx: ctx, stop: stop, opts: encodeOpts{zone: time.UTC}}
}

// refuse answers a connection the server will not serve and closes it.
func (c *conn) refuse(code, msg string) {
	_ = c.nc.SetDeadline(time.Now().Add(5 * time.Second))
	c.send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	_ = c.flush()
	c.nc.Close()
	c.stop()
}

// kill closes the connection from another goroutine (server stop).
func (c *conn) kill() {
	c.mu.Lock()
	c.killed = true
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.stop()
	c.nc.Close()
}

// cancelStatement cancels the running statement, if any (CancelRequest).
func (c *conn) cancelStatement() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
		// A phase that does not watch its context (planning) finishes;
		// the statement then stops before it runs.
		c.canceled = true
	}
}

// errCanceled is the error of a canceled statement.
var errCanceled = &pgError{code: stateQueryCanceled, msg: "canceling statement due to user request"}

// checkCanceled returns errCanceled when a CancelRequest came for the
// statement in progress.
func (c *conn) checkCanceled() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.canceled {
		return errCanceled
	}
	return nil
}

// statementContext is the context of one statement, canceled by a
// CancelRequest or when the connection ends.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := c.withTimeout(c.baseCtx)
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		cancel()
	}
}

// send buffers a message, encoded by pgproto3.
func (c *conn) send(msg pgproto3.BackendMessage) {
	out, err := msg.Encode(c.out)
	if err != nil {
		// Only a message over the protocol's limits fails to encode.
		c.srv.log.Error("encode message", "type", fmt.Sprintf("%T", msg), "err", err)
		return
	}
	c.out = out
}

// flush writes the buffered messages; a client that reads nothing for the
// stall timeout fails the write.
func (c *conn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	if d := c.srv.front.StallTimeout(); d > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(d))
	}
	_, err := c.nc.Write(c.out)
	if cap(c.out) > 4*flushBytes {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	if err != nil {
		return fmt.Errorf("write to client: %w", err)
	}
	return nil
}

// maybeFlush writes the buffer once it is large.
func (c *conn) maybeFlush() error {
	if len(c.out) >= flushBytes {
		return c.flush()
	}
	return nil
}

// sendError buffers err's ErrorResponse and logs err's whole text (the
// message sent leaves out its "arrowstream: " prefix): an internal error
// as an error, like the Flight SQL port's; any other (a client's bad
// statement, a refusal) at info, as PostgreSQL logs the errors it sends.
// The text is bounded: errors quote their input.
func (c *conn) sendError(err error) {
	resp := errorResponse(err)
	level := slog.LevelInfo
	if resp.Code == stateInternal {
		level = slog.LevelError
	}
	c.srv.log.Log(context.Background(), level, "sent an error to a PostgreSQL client", "sqlstate", resp.Code, "severity", resp.Severity,
		"user", server.LogName(c.slotUser), "err", server.ShortenMessage(err.Error()))
	c.send(resp)
}

// serve runs the connection to its end.
func (c *conn) serve() {
	defer c.close()
	defer func() {
		if r := recover(); r != nil {
			c.srv.panics.Add(1)
			c.srv.log.Error("panic in connection", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	_ = c.nc.SetDeadline(time.Now().Add(c.srv.cfg.LoginTimeout))
	c.rd = &connReader{c: c}
	c.be = pgproto3.NewBackend(c.rd, io.Discard)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageBytes)
	ok, err := c.startup()
	if err != nil {
		var pe *pgError
		if errors.As(err, &pe) {
			pe.fatal = true
			c.sendError(pe)
			_ = c.flush()
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			c.srv.log.Debug("startup failed", "remote", c.nc.RemoteAddr().String(), "err", err)
		}
		return
	}
	if !ok {
		return
	}
	_ = c.nc.SetDeadline(time.Time{})
	c.loop()
}

func (c *conn) close() {
	for name := range c.portals {
		c.dropPortal(name)
	}
	c.stop()
	c.nc.Close()
	// Only the connection's goroutine runs close (kill may run under the
	// server's lock), so slotUser needs no lock.
	if c.slotUser != "" {
		c.srv.releaseUserSlot(c.slotUser)
		c.slotUser = ""
	}
}

// loop reads and handles messages until Terminate or an error.
func (c *conn) loop() {
	// skipToSync: after an error in the extended protocol, messages are
	// discarded until Sync.
	skipToSync := false
	for {
		msg, err := c.be.Receive()
		if err != nil {
			var big *pgproto3.ExceededMaxBodyLenErr
			if errors.As(err, &big) {
				c.sendError(&pgError{code: stateProgramLimit, fatal: true,
					msg: fmt.Sprintf("message of %d bytes is larger than the server's limit of %d bytes", big.ActualBodyLen, big.MaxExpectedBodyLen)})
				_ = c.flush()
				return
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
				c.sendError(&pgError{code: stateProtocolViolation, fatal: true, msg: "invalid message: " + err.Error()})
				_ = c.flush()
			}
			return
		}
		if skipToSync {
			switch msg.(type) {
			case *pgproto3.Sync:
				skipToSync = false
			case *pgproto3.Terminate:
				return
			default:
				continue
			}
		}
		var herr error
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(m.String)
		case *pgproto3.Parse:
			herr = c.parse(m)
		case *pgproto3.Bind:
			herr = c.bind(m)
		case *pgproto3.Describe:
			herr = c.describe(m)
		case *pgproto3.Execute:
			herr = c.execute(m)
		case *pgproto3.Close:
			herr = c.closeObject(m)
		case *pgproto3.Sync:
			c.sync()
		case *pgproto3.Flush:
		case *pgproto3.Terminate:
			return
		default:
			herr = &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("message %T is not supported", msg)}
		}
		if herr != nil {
			var pe *pgError
			if errors.As(herr, &pe) && pe.fatal {
				c.sendError(herr)
				_ = c.flush()
				return
			}
			c.sendError(herr)
			if c.txn == 'T' {
				c.txn = 'E'
			}
			skipToSync = true
		}
		if _, isSimple := msg.(*pgproto3.Query); isSimple || herr != nil {
			if err := c.flush(); err != nil {
				return
			}
			continue
		}
		switch msg.(type) {
		case *pgproto3.Sync, *pgproto3.Flush:
			if err := c.flush(); err != nil {
				return
			}
		}
	}
}

// sync ends an extended-protocol cycle: the unnamed portal closes, as at
// the end of an implicit transaction.
func (c *conn) sync() {
	c.dropPortal("")
	c.readyForQuery()
}

func (c *conn) readyForQuery() {
	c.mu.Lock()
	c.canceled = false
	c.mu.Unlock()
	c.send(&pgproto3.ReadyForQuery{TxStatus: c.txn})
}

var errTLSRequired = &pgError{code: stateInvalidAuthSpec, msg: "this server accepts only TLS connections: connect with sslmode=require"}

// startup handles SSLRequest, CancelRequest and StartupMessage, then the
// login. It returns false for a connection that ends after startup (a
// cancel request).
func (c *conn) startup() (bool, error) {
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return false, err
			}
			return false, &pgError{code: stateProtocolViolation, msg: "invalid startup packet: " + err.Error()}
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.isTLS {
				return false, &pgError{code: stateProtocolViolation, msg: "SSLRequest on an encrypted connection"}
			}
			if c.srv.tls == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(c.nc, c.srv.tls)
			if err := tc.HandshakeContext(c.baseCtx); err != nil {
				return false, fmt.Errorf("TLS handshake: %w", err)
			}
			c.nc, c.isTLS = tc, true
			c.be = pgproto3.NewBackend(c.rd, io.Discard)
			c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageBytes)
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false, nil
		case *pgproto3.StartupMessage:
			if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
				// 3.2 clients accept 3.0 (NegotiateProtocolVersion).
				c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0})
			}
			if !c.isTLS && !c.srv.loopback {
				return false, errTLSRequired
			}
			return true, c.login(m.Parameters)
		default:
			return false, &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("unexpected startup message %T", msg)}
		}
	}
}

// login authenticates the user and sends the session's parameters.
func (c *conn) login(params map[string]string) error {
	user := params["user"]
	if user == "" {
		return &pgError{code: stateInvalidAuthSpec, msg: "no user name in the startup packet"}
	}
	if db := params["database"]; db != "" && !strings.EqualFold(db, databaseName) && db != user && db != "postgres" {
		return &pgError{code: "3D000", msg: fmt.Sprintf("database %q does not exist (this server has one database, %q)", db, databaseName)}
	}
	if c.srv.front.AuthRequired() {
		if err := c.authenticate(user); err != nil {
			return err
		}
	}
	// Counted after authentication: an unauthenticated client cannot
	// take a user's slots (the login timeout bounds how long it holds one
	// of MaxConnections).
	if !c.srv.takeUserSlot(user) {
		return &pgError{code: stateTooManyConns, msg: fmt.Sprintf("too many connections for user %q: the server accepts %d per user (--pg-max-connections-per-user)",
			server.LogName(user), c.srv.cfg.MaxConnectionsPerUser)}
	}
	c.slotUser = user
	c.sess = c.srv.front.NewSession(user)
	c.sess.SetCatalog(pgCatalog{c})
	c.dialect = dialect{user: user, version: "PostgreSQL " + c.srv.cfg.ServerVersion}
	c.params = map[string]string{
		"server_version":              c.srv.cfg.ServerVersion,
		"server_encoding":             "UTF8",
		"client_encoding":             "UTF8",
		"DateStyle":                   "ISO, MDY",
		"IntervalStyle":               "postgres",
		"TimeZone":                    "UTC",
		"integer_datetimes":           "on",
		"standard_conforming_strings": "on",
		"is_superuser":                "off",
		"session_authorization":       user,
		"application_name":            params["application_name"],
		"search_path":                 `"$user", public`,
		"extra_float_digits":          "1",
	}
	settings := startupOptions(params["options"])
	for k, v := range params {
		settings[k] = v
	}
	for k, v := range settings {
		switch strings.ToLower(k) {
		case "timezone", "datestyle", "client_encoding", "application_name", "extra_float_digits", "search_path", "statement_timeout":
			if err := c.setParam(k, v); err != nil {
				return err
			}
		}
	}
	c.send(&pgproto3.AuthenticationOk{})
	for _, k := range []string{"server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle", "TimeZone",
		"integer_datetimes", "standard_conforming_strings", "is_superuser", "session_authorization", "application_name"} {
		c.send(&pgproto3.ParameterStatus{Name: k, Value: c.params[k]})
	}
	var key [4]byte
	key[0], key[1], key[2], key[3] = byte(c.secret>>24), byte(c.secret>>16), byte(c.secret>>8), byte(c.secret)
	c.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: key[:]})
	c.readyForQuery()
	return c.flush()
}

// databaseName is the one database the server reports.
const databaseName = "arrowstream"
