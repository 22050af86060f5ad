package pgwire

import (
	"errors"
	"net"
	"sync"
	"time"
)

// A subscription waits for commits without reading the connection, so on
// its own it would notice a client that closed its connection only when
// the next epoch commits. While it runs, watchClient reads the
// connection in the background: end of file (the client went away) or
// any message (a client is not to send one while a statement runs;
// psql's Ctrl-C comes on another connection) ends the subscription.
// Bytes read are kept (connReader) for the message loop.

// connReader is what the protocol reader reads: bytes a watcher took
// first, then the connection.
type connReader struct {
	c *conn

	mu      sync.Mutex
	pending []byte
}

func (r *connReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		r.mu.Unlock()
		return n, nil
	}
	r.mu.Unlock()
	return r.c.nc.Read(p)
}

func (r *connReader) keep(b []byte) {
	r.mu.Lock()
	r.pending = append(r.pending, b...)
	r.mu.Unlock()
}

// watchClient calls gone when the client closes its connection or sends
// something, until the returned stop, which waits for the watcher to
// end and leaves the connection as it was.
func (c *conn) watchClient(gone func()) (stop func()) {
	done := make(chan struct{})
	var mu sync.Mutex
	stopping := false
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		n, err := c.nc.Read(buf)
		if n > 0 {
			c.rd.keep(buf[:n])
		}
		mu.Lock()
		stopped := stopping
		mu.Unlock()
		var ne net.Error
		if stopped && n == 0 && errors.As(err, &ne) && ne.Timeout() {
			return // stop's deadline, not the client
		}
		gone()
	}()
	return func() {
		mu.Lock()
		stopping = true
		mu.Unlock()
		_ = c.nc.SetReadDeadline(time.Now())
		<-done
		_ = c.nc.SetReadDeadline(time.Time{})
	}
}
