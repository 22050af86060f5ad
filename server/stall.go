package server

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"

	"github.com/arrowstream/arrowstream/vector"
)

// A client that opens a DoGet and never reads blocks the server's Send
// once the flow-control windows are full; gRPC offers no way to abort one
// stream's Send, so the stream would hold its operator (records, snapshots)
// and the message in flight until the query timeout. stallGuard releases
// the operator when one message has not been accepted for
// Limits.StallTimeout and closes the client's connection, which ends the
// blocked Send.

// connTracker remembers the server's open connections by remote address.
type connTracker struct {
	mu    sync.Mutex
	conns map[string]net.Conn
	// onClose, when set, learns the remote address of each connection
	// that closes (the session settings of that connection end).
	onClose func(addr string)
}

func newConnTracker() *connTracker { return &connTracker{conns: map[string]net.Conn{}} }

func (t *connTracker) wrap(l net.Listener) net.Listener { return &trackedListener{Listener: l, t: t} }

// close closes the connection of remote address addr, if open.
func (t *connTracker) close(addr string) bool {
	t.mu.Lock()
	c := t.conns[addr]
	delete(t.conns, addr)
	t.mu.Unlock()
	if c == nil {
		return false
	}
	c.Close()
	return true
}

type trackedListener struct {
	net.Listener
	t *connTracker
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	key := c.RemoteAddr().String()
	l.t.mu.Lock()
	l.t.conns[key] = c
	l.t.mu.Unlock()
	return &trackedConn{Conn: c, t: l.t, key: key}, nil
}

type trackedConn struct {
	net.Conn
	t    *connTracker
	key  string
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		if c.t.conns[c.key] == c.Conn {
			delete(c.t.conns, c.key)
		}
		onClose := c.t.onClose
		c.t.mu.Unlock()
		if onClose != nil {
			onClose(c.key)
		}
	})
	return c.Conn.Close()
}

// stallGuard watches the Sends of one DoGet stream.
type stallGuard struct {
	flight.FlightService_DoGetServer
	timeout time.Duration
	timer   *time.Timer

	mu      sync.Mutex
	op      vector.Operator // closed by whoever sets closed
	closed  bool
	stalled bool
}

// guardStream wraps stream and op; with no stall timeout it returns them
// as they are.
func (s *Server) guardStream(ctx context.Context, stream flight.FlightService_DoGetServer, op vector.Operator) (flight.FlightService_DoGetServer, vector.Operator, *stallGuard) {
	timeout := s.cfg.Limits.StallTimeout
	if timeout <= 0 {
		return stream, op, nil
	}
	g := &stallGuard{FlightService_DoGetServer: stream, timeout: timeout, op: op}
	remote := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	g.timer = time.AfterFunc(time.Hour, func() {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return
		}
		g.closed, g.stalled = true, true
		op := g.op
		g.mu.Unlock()
		op.Close() // Next is not running: the stream's goroutine is in Send
		s.log.Warn("result stream stalled: the client read nothing; stream cancelled and connection closed",
			"timeout", timeout, "remote", remote, "user", UserFromContext(ctx))
		s.conns.close(remote)
	})
	g.timer.Stop()
	return g, guardedOperator{g}, g
}

// Send arms the stall timer for the duration of one message.
func (g *stallGuard) Send(d *flight.FlightData) error {
	g.timer.Reset(g.timeout)
	err := g.FlightService_DoGetServer.Send(d)
	g.timer.Stop()
	if err != nil && g.isStalled() {
		return g.err()
	}
	return err
}

func (g *stallGuard) isStalled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stalled
}

func (g *stallGuard) err() error {
	return statusf(codes.DeadlineExceeded, "result stream cancelled: the client read nothing for %v (Limits.StallTimeout, --stall-timeout)", g.timeout)
}

// stop disarms the guard when the stream ends.
func (g *stallGuard) stop() {
	if g != nil {
		g.timer.Stop()
	}
}

// guardedOperator serialises the operator with the stall timer's Close.
type guardedOperator struct{ g *stallGuard }

func (o guardedOperator) Schema() *arrow.Schema { return o.g.op.Schema() }

func (o guardedOperator) Next(ctx context.Context) (arrow.Record, error) {
	o.g.mu.Lock()
	defer o.g.mu.Unlock()
	if o.g.closed {
		if o.g.stalled {
			return nil, o.g.err()
		}
		return nil, io.EOF
	}
	return o.g.op.Next(ctx)
}

func (o guardedOperator) Close() error {
	o.g.mu.Lock()
	if o.g.closed {
		o.g.mu.Unlock()
		return nil
	}
	o.g.closed = true
	o.g.mu.Unlock()
	return o.g.op.Close()
}
