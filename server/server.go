package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// Server is the Arrow Flight and Flight SQL service. Create it with New,
// then Start (or Serve) it; Stop ends it. Its methods are safe for
// concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mem     memory.Allocator
	ipcOpts []ipc.Option
	auth    *authenticator // nil without authentication
	grants  readGrants     // nil: every user reads every table
	grpc    *grpc.Server
	sql     *sqlServer
	svc     *service      // the Flight service the gRPC server calls (after the interceptors)
	streams chan struct{} // semaphore of DoGet/DoPut streams
	pool    *memoryPool   // the process-wide memory limit
	ret     *memReturner  // returns memory to the OS after large releases
	quotas  *quotas
	conns   *connTracker // the open connections, to close a stalled reader's
	// settings are the SET values of each client connection (session).
	settings *sessionSettings

	active atomic.Int64 // streams being served (tests wait for zero)

	// life is cancelled when Stop begins: unbounded streams
	// (subscriptions) end then instead of holding up a graceful stop.
	life     context.Context
	stopLife context.CancelFunc

	mu      sync.Mutex
	lis     net.Listener
	done    chan struct{}
	serveEr error
	// stopWatch ends the quota watch of running tables (nil: none).
	stopWatch context.CancelFunc
}

// New validates cfg, loads the users and TLS files it names and builds
// the service. Nothing listens until Start.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("server: invalid configuration: %w", err)
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "server"),
		mem:     cfg.Allocator,
		streams: make(chan struct{}, cfg.Limits.MaxConcurrentStreams),
		grants:  newReadGrants(cfg.Auth.ReadGrants),
		pool:    newMemoryPool(cfg.Limits.ServerMemoryBytes, cfg.Allocator),
		quotas:  newQuotas(cfg.Limits, cfg.Queries),
		conns:   newConnTracker(),
	}
	s.life, s.stopLife = context.WithCancel(context.Background())
	s.ret = newMemReturner(cfg.Limits.ReturnMemoryBytes, cfg.Allocator, s.log)
	s.settings = newSessionSettings()
	s.conns.onClose = s.settings.closed
	switch cfg.IPCCompression {
	case "lz4":
		s.ipcOpts = []ipc.Option{ipc.WithLZ4()}
	case "zstd":
		s.ipcOpts = []ipc.Option{ipc.WithZstd()}
	}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.Limits.MaxMessageBytes),
		grpc.MaxSendMsgSize(cfg.Limits.MaxMessageBytes),
		grpc.MaxHeaderListSize(uint32(min(cfg.Limits.MaxHeaderBytes, 1<<30))),
		grpc.MaxConcurrentStreams(uint32(min(cfg.Limits.MaxConcurrentStreams*4, 1<<16))),
		// Find peers that vanished without closing, so that their streams
		// (and the snapshots those hold) end.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	unary := []grpc.UnaryServerInterceptor{s.recoverUnary}
	stream := []grpc.StreamServerInterceptor{s.recoverStream}
	switch {
	case cfg.Authenticator != nil:
		s.auth, s.grants = cfg.Authenticator.a, cfg.Authenticator.grants
	case cfg.Auth.enabled():
		a, err := newAuthenticator(cfg.Auth, s.log)
		if err != nil {
			return nil, err
		}
		s.auth = a
		if a.fileGrants != nil {
			s.grants = newReadGrants(mergeGrants(cfg.Auth.ReadGrants, a.fileGrants))
		}
	}
	if s.auth != nil {
		unary = append(unary, s.auth.unary)
		stream = append(stream, s.auth.stream)
	}
	if cfg.TLS.enabled() {
		tc, err := loadTLS(cfg.TLS)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	// The caller's interceptors (metrics, tracing) see every call, including
	// the ones authentication rejects.
	unary = append(append([]grpc.UnaryServerInterceptor(nil), cfg.UnaryInterceptors...), unary...)
	stream = append(append([]grpc.StreamServerInterceptor(nil), cfg.StreamInterceptors...), stream...)
	opts = append(opts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	sql, err := newSQLServer(s)
	if err != nil {
		return nil, err
	}
	s.sql = sql
	s.grpc = grpc.NewServer(opts...)
	s.svc = &service{
		FlightServer: flightsql.NewFlightServerWithAllocator(sql, s.mem),
		s:            s,
	}
	flight.RegisterFlightServiceServer(s.grpc, s.svc)
	return s, nil
}

// Start checks that the address may be served (see ErrInsecure), listens
// and serves in the background. It returns once the server accepts
// connections.
func (s *Server) Start(ctx context.Context) error {
	if err := s.cfg.checkExposure(ctx); err != nil {
		return err
	}
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.cfg.Addr, err)
	}
	lis = s.conns.wrap(lis)
	s.mu.Lock()
	if s.lis != nil {
		s.mu.Unlock()
		lis.Close()
		return errors.New("server: already started")
	}
	s.lis, s.done = lis, make(chan struct{})
	s.mu.Unlock()
	if f, ok := s.cfg.Queries.(QueryFailer); ok && s.cfg.Limits.watchesGrowth() {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.mu.Lock()
		s.stopWatch = cancel
		s.mu.Unlock()
		go s.quotas.watch(wctx, f, quotaWatchInterval, s.log.Warn)
	}
	s.log.Info("serving Arrow Flight and Flight SQL", "addr", lis.Addr().String(),
		"tls", s.cfg.TLS.enabled(), "mtls", s.cfg.TLS.ClientCAFile != "", "auth", s.auth != nil)
	go func() {
		defer close(s.done)
		err := s.grpc.Serve(lis)
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.log.Error("server stopped", "err", err)
			s.mu.Lock()
			s.serveEr = err
			s.mu.Unlock()
		}
	}()
	return nil
}

// Addr is the address the server listens on (nil before Start).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return nil
	}
	return s.lis.Addr()
}

// Stop stops accepting calls and waits for running ones until ctx is
// done, then cancels them. It releases the prepared statements.
func (s *Server) Stop(ctx context.Context) error {
	s.stopLife()
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		s.grpc.Stop()
		<-stopped
	}
	s.sql.prepared.closeAll()
	s.mu.Lock()
	done, err := s.done, s.serveEr
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	s.ret.stop() // its goroutine may be waiting out returnInterval
	return err
}

// Serve starts the server and blocks until ctx is done, then stops it,
// giving running calls grace to finish.
func (s *Server) Serve(ctx context.Context, grace time.Duration) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-done:
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return s.Stop(sctx)
}

// acquireStream takes a slot of the concurrent-stream limit.
func (s *Server) acquireStream() (func(), error) {
	select {
	case s.streams <- struct{}{}:
		s.active.Add(1)
		return func() { s.active.Add(-1); <-s.streams }, nil
	default:
		return nil, status.Errorf(codes.ResourceExhausted,
			"server busy: %d streams are running, the server's limit (MaxConcurrentStreams); retry later", cap(s.streams))
	}
}

// queryContext applies the query timeout, and ends the query when the
// server stops (StopQueries, Stop): a stopping server cancels its running
// statements at once instead of waiting out its grace period for a query
// that may never end (SIGTERM stopped a cross join only when the grace
// ran out).
func (s *Server) queryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	var cancelTimeout context.CancelFunc
	if s.cfg.Limits.QueryTimeout > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, s.cfg.Limits.QueryTimeout)
	} else {
		ctx, cancelTimeout = context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stopWatch := context.AfterFunc(s.life, func() { cancel(errServerStopping) })
	return ctx, func() {
		stopWatch()
		cancel(context.Canceled)
		cancelTimeout()
	}
}

// StopQueries cancels every running statement and subscription, as Stop
// does first; the process calls it as soon as it is asked to stop, before
// it stops its streaming queries and front ends.
func (s *Server) StopQueries() { s.stopLife() }

// recoverUnary and recoverStream are the goroutine roots of every call: a
// panic becomes an Internal error (a memory limit, ResourceExhausted) and
// is logged with its stack; the server stays up.
func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in call", "method", info.FullMethod, "panic", r, "stack", stack())
			resp, err = nil, shortStatus(statusOf(panicError(methodName(info.FullMethod), r), codes.Internal))
		}
	}()
	resp, err = h(ctx, req)
	err = shortStatus(err)
	s.logCall(info.FullMethod, err)
	return resp, err
}

func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in call", "method", info.FullMethod, "panic", r, "stack", stack())
			err = shortStatus(statusOf(panicError(methodName(info.FullMethod), r), codes.Internal))
		}
	}()
	err = shortStatus(h(srv, ss))
	s.logCall(info.FullMethod, err)
	return err
}

func (s *Server) logCall(method string, err error) {
	if err == nil {
		return
	}
	c := status.Code(err)
	switch c {
	case codes.Internal, codes.Unknown, codes.DataLoss:
		s.log.Error("call failed", "method", methodName(method), "code", c.String(), "err", err)
	case codes.Canceled:
	default:
		s.log.Debug("call failed", "method", methodName(method), "code", c.String(), "err", err)
	}
}

func methodName(full string) string {
	return full[strings.LastIndexByte(full, '/')+1:]
}

func stack() string { return string(debug.Stack()) }
