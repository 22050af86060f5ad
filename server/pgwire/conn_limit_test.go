package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// stalledLogin opens a connection that sends a startup packet for user
// and then never answers the server's SCRAM challenge.
func stalledLogin(t *testing.T, f *fixture, user string) net.Conn {
	t.Helper()
	c := rawConn(t, f)
	body := []byte{0, 3, 0, 0} // protocol 3.0
	for _, s := range []string{"user", user, "database", "arrowstream"} {
		body = append(body, s...)
		body = append(body, 0)
	}
	body = append(body, 0)
	pkt := binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))
	if _, err := c.Write(append(pkt, body...)); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 5)
	if _, err := io.ReadFull(c, head); err != nil || head[0] != 'R' {
		t.Fatalf("stalled login of %s: want an authentication request, got %q, %v", user, head, err)
	}
	return c
}

// connectWhenFree connects as dsn, retrying while the server still
// counts a slot the client gave back (its close reaches the server
// asynchronously); any other error, or 53300 past a generous deadline,
// fails.
func connectWhenFree(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := pgx.Connect(ctx, dsn)
		cancel()
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
			return c
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != stateTooManyConns || time.Now().After(deadline) {
			t.Fatalf("connect %s: %v", dsn, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMaxConnectionsPerUser: one user's connections past
// MaxConnectionsPerUser are refused with 53300 naming the user and the
// flag, while another user still connects; a connection closed, or cut
// by its client going away, frees its slot; logins that have not
// authenticated (stalled in SCRAM) hold none of the user's slots.
func TestMaxConnectionsPerUser(t *testing.T) {
	f := authFixture(t, func(c *Config) { c.MaxConnections = 20; c.MaxConnectionsPerUser = 3 }, false)
	alice, bob := f.dsn("alice", "alice-pw", ""), f.dsn("bob", "bob-pw", "")
	// Stalled logins as alice first: they must not count as hers.
	for i := 0; i < 3; i++ {
		stalledLogin(t, f, "alice")
	}
	var conns []*pgx.Conn
	for i := 0; i < 3; i++ {
		conns = append(conns, pgxConnect(t, alice))
	}
	err := connectErr(alice)
	wantState(t, err, stateTooManyConns)
	var pe *pgconn.PgError
	errors.As(err, &pe)
	if want := `too many connections for user "alice": the server accepts 3 per user (--pg-max-connections-per-user)`; pe.Message != want {
		t.Errorf("refusal: %q, want %q", pe.Message, want)
	}
	// A failed login as alice neither counts nor is told about her slots.
	wantState(t, connectErr(f.dsn("alice", "wrong", "")), stateInvalidPassword)
	b := pgxConnect(t, bob)
	var n int64
	if err := b.QueryRow(context.Background(), "SELECT count(*) FROM granted").Scan(&n); err != nil || n != 3 {
		t.Fatalf("bob while alice is at her limit: %d, %v", n, err)
	}
	for _, c := range conns {
		if err := c.Ping(context.Background()); err != nil {
			t.Fatalf("alice's connection after the refusal: %v", err)
		}
	}

	// A clean close frees a slot.
	conns[0].Close(context.Background())
	conns[0] = connectWhenFree(t, alice)
	wantState(t, connectErr(alice), stateTooManyConns)
	// So does a client that goes away without Terminate.
	if err := conns[1].PgConn().Conn().Close(); err != nil {
		t.Fatal(err)
	}
	conns[1] = connectWhenFree(t, alice)
	wantState(t, connectErr(alice), stateTooManyConns)
}

// TestLoginTimeoutFreesSlots: clients that connect and send nothing, or
// stall in the SCRAM exchange, are disconnected after LoginTimeout, so
// that they cannot hold the server's connections for good.
func TestLoginTimeoutFreesSlots(t *testing.T) {
	f := authFixture(t, func(c *Config) { c.MaxConnections = 2; c.LoginTimeout = 2 * time.Second }, false)
	silent := rawConn(t, f)
	stalled := stalledLogin(t, f, "alice")
	wantState(t, connectErr(f.dsn("bob", "bob-pw", "")), stateTooManyConns)
	for name, c := range map[string]net.Conn{"silent": silent, "stalled in SCRAM": stalled} {
		// rawConn's deadline is generous; the server must close first.
		_, err := io.Copy(io.Discard, c)
		if err != nil && strings.Contains(err.Error(), "timeout") {
			t.Fatalf("%s client: the server did not disconnect it: %v", name, err)
		}
	}
	connectWhenFree(t, f.dsn("bob", "bob-pw", ""))
}
