package pgwire

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// running reports whether a connection of s is executing a query (past
// planning).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		busy := c.executing
		c.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

func sendCancel(t *testing.T, addr string, pid, secret uint32) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := binary.BigEndian.AppendUint32(nil, 16)
	msg = binary.BigEndian.AppendUint32(msg, 80877102)
	msg = binary.BigEndian.AppendUint32(msg, pid)
	msg = binary.BigEndian.AppendUint32(msg, secret)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Read(make([]byte, 1)) // the server closes it
}

// TestCancelRequest: a CancelRequest with the wrong secret for a running
// backend does nothing; with the backend's key it stops the statement
// while it runs, with 57014, and the connection runs the next one. (A
// cancel that comes while a statement is planned fails it when planning
// ends: TestCancelWhilePlanning.)
func TestCancelRequest(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	pid, secret := c.PgConn().PID(), c.PgConn().SecretKey()
	done := make(chan error, 1)
	go func() {
		var n int64
		done <- c.QueryRow(ctx, "SELECT count(*) FROM range(0, 200000) a CROSS JOIN range(0, 200000) b").Scan(&n)
	}()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for !f.pg.running() {
		if time.Now().After(deadline) {
			t.Fatal("the query never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sendCancel(t, f.pg.Addr().String(), pid, binary.BigEndian.Uint32(secret)^1)
	select {
	case err := <-done:
		t.Fatalf("query ended after a cancel with the wrong key: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	sendCancel(t, f.pg.Addr().String(), pid, binary.BigEndian.Uint32(secret))
	select {
	case err := <-done:
		wantState(t, err, "57014")
	case <-time.After(testutil.Scaled(time.Minute)):
		t.Fatal("query not canceled")
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after cancel: %v", err)
	}
}

// TestCancelWhilePlanning: a cancel that arrives while the statement is
// being planned (which does not watch for it) fails the statement with
// 57014 once planning ends.
func TestCancelWhilePlanning(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	c := pgxConnect(t, f.dsn("alice", "", ""))
	c.PgConn()
	// White-box: the cancel flag as a CancelRequest during planning
	// leaves it.
	var conn *conn
	f.pg.mu.Lock()
	for k := range f.pg.conns {
		conn = k
	}
	f.pg.mu.Unlock()
	conn.mu.Lock()
	conn.canceled = true
	conn.mu.Unlock()
	_, err := c.Exec(context.Background(), "SELECT 1", pgx.QueryExecModeSimpleProtocol)
	wantState(t, err, "57014")
	var one int
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after cancel: %v", err)
	}
}
