package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/arrowstream/arrowstream/server"
)

// TestPreparedBytesBounded: what one connection's named statements and
// portals hold is bounded (Config.MaxPreparedBytes). Before, a connection
// could keep 10,000 statements of up to the statement limit each (10 GB
// at the 1 MiB default) and 10,000 portals of a message's worth of bound
// values, outside every memory account. Through pgx: statements of 200 KB
// fill a 1 MiB bound, the next is refused with 54000 naming the flag, a
// closed one gives its bytes back, and the connection keeps serving; the
// same for named portals holding bound values.
func TestPreparedBytesBounded(t *testing.T) {
	const limit = 1 << 20
	f := startFixture(t, fixtureOpts{pg: func(c *Config) { c.MaxPreparedBytes = limit }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pgxConnect(t, f.dsn("bob", "", "default_query_exec_mode=simple_protocol"))
	pc := c.PgConn()
	text := func(i int) string {
		return fmt.Sprintf("SELECT %d AS i, '%s' AS pad", i, strings.Repeat("x", 200_000))
	}
	wantLimit := func(err error, what string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "54000" || !strings.Contains(pe.Message, "--pg-max-prepared-bytes") {
			t.Fatalf("%s: %v, want 54000 naming --pg-max-prepared-bytes", what, err)
		}
	}
	n := 0
	for ; n < 10; n++ {
		_, err := pc.Prepare(ctx, fmt.Sprintf("s%d", n), text(n), nil)
		if err != nil {
			wantLimit(err, fmt.Sprintf("statement %d", n))
			break
		}
	}
	if n != 5 { // 5 × 200 KB fit in 1 MiB, a sixth does not
		t.Fatalf("%d statements of 200 KB prepared under a 1 MiB bound, want 5", n)
	}
	// The connection still serves, its statements run, and a closed one
	// makes room.
	res := pc.ExecPrepared(ctx, "s3", nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "3" {
		t.Fatalf("s3: %v %q", res.Err, res.Rows)
	}
	if err := pc.Deallocate(ctx, "s0"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Prepare(ctx, "s5", text(5), nil); err != nil {
		t.Fatalf("after closing s0: %v", err)
	}
	for _, name := range []string{"s1", "s2", "s3", "s4", "s5"} {
		if err := pc.Deallocate(ctx, name); err != nil {
			t.Fatal(err)
		}
	}

	// Named portals keep their bound values until closed (they outlive
	// Sync here): 300 KB of values each, the fourth is refused.
	if _, err := pc.Prepare(ctx, "p", "SELECT length($1::text) AS n", nil); err != nil {
		t.Fatal(err)
	}
	fe := pc.Frontend()
	value := []byte(strings.Repeat("y", 300_000))
	bind := func(portal string) error {
		fe.Send(&pgproto3.Bind{DestinationPortal: portal, PreparedStatement: "p", Parameters: [][]byte{value}})
		fe.Send(&pgproto3.Sync{})
		if err := fe.Flush(); err != nil {
			return err
		}
		var failed error
		for {
			msg, err := pc.ReceiveMessage(ctx)
			if err != nil {
				return err
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				failed = pgconn.ErrorResponseToPgError(m)
			case *pgproto3.ReadyForQuery:
				return failed
			}
		}
	}
	bound := 0
	for ; bound < 6; bound++ {
		if err := bind(fmt.Sprintf("q%d", bound)); err != nil {
			wantLimit(err, fmt.Sprintf("portal %d", bound))
			break
		}
	}
	if bound != 3 {
		t.Fatalf("%d portals of 300 KB bound under a 1 MiB bound, want 3", bound)
	}
	// Closing a portal gives its bytes back.
	fe.Send(&pgproto3.Close{ObjectType: 'P', Name: "q0"})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := pc.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	if err := bind("q9"); err != nil {
		t.Fatalf("after closing q0: %v", err)
	}
	var got int
	if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&got); err != nil || got != 42 {
		t.Fatalf("the connection after the refusals: %v %d", err, got)
	}
}

// TestLongErrorMessageBounded: an error quoting a large value reaches a
// pgx client as the error with its message bounded
// (server.MaxErrorMessageBytes), as on the Flight SQL port.
func TestLongErrorMessageBounded(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	c := pgxConnect(t, f.dsn("bob", "", ""))
	var n int
	err := c.QueryRow(context.Background(), "SELECT CAST(repeat('x', 1000000) AS INT)").Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Message) > server.MaxErrorMessageBytes+100 || !strings.Contains(pe.Message, "left out") ||
		!strings.Contains(pe.Message, "xxxx") {
		t.Fatalf("error %T of %d bytes: %.300v", err, len(fmt.Sprint(err)), err)
	}
	if err := c.QueryRow(context.Background(), "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after the error: %v %d", err, n)
	}
}
