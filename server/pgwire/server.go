package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/server"
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes = 16 << 20
	DefaultMaxConnections  = 1000
	// DefaultMaxConnectionsPerUser leaves a tenth of the default bound to
	// the other users when one user's pool or a leaking client fills up.
	DefaultMaxConnectionsPerUser = 100
	DefaultLoginTimeout          = 30 * time.Second
	// DefaultMaxPreparedBytes bounds what one connection's prepared
	// statements and portals hold (their text and bound values).
	DefaultMaxPreparedBytes = 64 << 20
)

// Config configures a PostgreSQL endpoint.
type Config struct {
	// Addr is the listen address (host:port; port 0 picks one).
	Addr string
	// AllowInsecure allows a non-loopback address without authentication
	// and TLS, and plain connections on it.
	AllowInsecure bool
	// PasswordAuth is "scram-sha-256" (the default) or "password": a
	// cleartext password, accepted only on TLS connections.
	PasswordAuth string
	// MaxMessageBytes bounds a client message (0: DefaultMaxMessageBytes).
	MaxMessageBytes int
	// MaxConnections bounds the open connections (0:
	// DefaultMaxConnections); more are refused with 53300.
	MaxConnections int
	// MaxConnectionsPerUser bounds the open connections of one user,
	// counted after authentication (0: DefaultMaxConnectionsPerUser;
	// negative: no bound); more are refused with 53300. Without it one
	// user could hold all MaxConnections and lock every other user out.
	MaxConnectionsPerUser int
	// LoginTimeout bounds the startup and login of a connection (0:
	// DefaultLoginTimeout).
	LoginTimeout time.Duration
	// MaxPreparedBytes bounds the bytes one connection's named prepared
	// statements and portals hold: their SQL text and bound parameter
	// values (0: DefaultMaxPreparedBytes). A Parse or Bind past it fails
	// with 54000. Without it a connection could keep 10,000 statements of
	// MaxStatementBytes each, or 10,000 portals of MaxMessageBytes of
	// values, on the heap.
	MaxPreparedBytes int64
	// ServerVersion is reported as server_version (default "15.0
	// (Arrowstream)"): drivers parse it to pick features.
	ServerVersion string
}

// ErrInsecure is returned by Start for a non-loopback address without
// authentication and TLS, unless Config.AllowInsecure is set.
var ErrInsecure = errors.New("refusing to serve the PostgreSQL protocol on a non-loopback address without authentication and TLS")

// Server is a PostgreSQL endpoint over a server.Frontend.
type Server struct {
	cfg      Config
	front    *server.Frontend
	log      *slog.Logger
	tls      *tls.Config // nil: no TLS
	loopback bool        // the address is loopback: plain connections allowed

	mu      sync.Mutex
	lis     net.Listener
	conns   map[*conn]struct{}
	keys    map[uint32]*conn // by process ID, for CancelRequest
	perUser map[string]int   // logged-in connections by user
	nextPID uint32
	closing bool
	wg      sync.WaitGroup
	// panics counts connections that ended in a recovered panic (a bug;
	// the fuzz target checks it stays zero).
	panics atomic.Int64
}

// New builds an endpoint serving front's tables; nothing listens until
// Start.
func New(front *server.Frontend, cfg Config) (*Server, error) {
	switch cfg.PasswordAuth {
	case "":
		cfg.PasswordAuth = "scram-sha-256"
	case "scram-sha-256", "password":
	default:
		return nil, fmt.Errorf("pgwire: PasswordAuth %q: want scram-sha-256 or password", cfg.PasswordAuth)
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxConnectionsPerUser == 0 {
		cfg.MaxConnectionsPerUser = DefaultMaxConnectionsPerUser
	}
	if cfg.MaxPreparedBytes <= 0 {
		cfg.MaxPreparedBytes = DefaultMaxPreparedBytes
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = DefaultLoginTimeout
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = "15.0 (Arrowstream)"
	}
	tc, err := front.TLSConfig()
	if err != nil {
		return nil, fmt.Errorf("pgwire: %w", err)
	}
	return &Server{cfg: cfg, front: front, log: front.Logger().With("component", "pgwire"), tls: tc,
		conns: map[*conn]struct{}{}, keys: map[uint32]*conn{}, perUser: map[string]int{}}, nil
}

// Start checks the address may be served, listens and accepts in the
// background.
func (s *Server) Start(ctx context.Context) error {
	loop, err := isLoopback(s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("pgwire: address %q: %w", s.cfg.Addr, err)
	}
	if !loop && !s.cfg.AllowInsecure && (s.tls == nil || !s.front.AuthRequired()) {
		return fmt.Errorf("pgwire: address %q: %w: configure users and a TLS certificate, listen on 127.0.0.1, or allow it (--allow-insecure)", s.cfg.Addr, ErrInsecure)
	}
	s.loopback = loop || s.cfg.AllowInsecure
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("pgwire: listen on %s: %w", s.cfg.Addr, err)
	}
	s.mu.Lock()
	if s.lis != nil {
		s.mu.Unlock()
		lis.Close()
		return errors.New("pgwire: already started")
	}
	s.lis = lis
	s.mu.Unlock()
	s.log.Info("serving the PostgreSQL protocol", "addr", lis.Addr().String(), "tls", s.tls != nil, "auth", s.front.AuthRequired())
	s.wg.Add(1)
	go s.accept(lis)
	return nil
}

// Addr is the listen address (nil before Start).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return nil
	}
	return s.lis.Addr()
}

// Stop closes the listener and every connection (canceling their
// statements) and waits for their goroutines until ctx ends.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	lis := s.lis
	for c := range s.conns {
		c.kill()
	}
	s.mu.Unlock()
	if lis != nil {
		lis.Close()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pgwire: stop: connections still running: %w", ctx.Err())
	}
}

func (s *Server) accept(lis net.Listener) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := lis.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if !closing {
				s.log.Error("accept failed", "err", err)
			}
			return
		}
		delay = 0
		c := newConn(s, nc)
		if !s.track(c) {
			c.refuse("53300", fmt.Sprintf("too many connections: the server accepts %d (MaxConnections)", s.cfg.MaxConnections))
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			c.serve()
		}()
	}
}

// track registers a new connection and gives it a backend key; false
// when the server is full or closing.
func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || len(s.conns) >= s.cfg.MaxConnections {
		return false
	}
	s.conns[c] = struct{}{}
	for {
		s.nextPID++
		if s.nextPID == 0 {
			s.nextPID = 1
		}
		if _, taken := s.keys[s.nextPID]; !taken {
			break
		}
	}
	c.pid = s.nextPID
	var b [4]byte
	_, _ = rand.Read(b[:])
	c.secret = binary.BigEndian.Uint32(b[:])
	s.keys[c.pid] = c
	return true
}

// takeUserSlot counts a logged-in connection of user; false when the user
// already holds MaxConnectionsPerUser.
func (s *Server) takeUserSlot(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.MaxConnectionsPerUser > 0 && s.perUser[user] >= s.cfg.MaxConnectionsPerUser {
		return false
	}
	s.perUser[user]++
	return true
}

// releaseUserSlot gives back a slot takeUserSlot gave.
func (s *Server) releaseUserSlot(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUser[user] <= 1 {
		delete(s.perUser, user) // no entry per user ever seen
		return
	}
	s.perUser[user]--
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	delete(s.keys, c.pid)
}

// cancel cancels the running statement of the backend with key (pid,
// secret); a wrong secret does nothing, as in PostgreSQL, and is logged.
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.keys[pid]
	s.mu.Unlock()
	if c == nil || len(secret) != 4 || binary.BigEndian.Uint32(secret) != c.secret {
		s.log.Warn("cancel request with an unknown backend key", "pid", pid)
		return
	}
	c.cancelStatement()
}

// connections is the number of open connections (tests).
func (s *Server) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// isLoopback reports whether addr's host is a loopback address (an empty
// host, all interfaces, is not).
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
