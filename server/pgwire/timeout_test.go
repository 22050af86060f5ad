package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// endless is a query that does not end in any test's lifetime (4·10^10
// rows to count).
const endless = "SELECT count(*) FROM range(0, 200000) a CROSS JOIN range(0, 200000) b"

// TestStatementTimeout: SET statement_timeout makes a statement that
// outlasts it fail with 57014 and PostgreSQL's message, for the simple
// and the extended protocol; the session goes on; 0 turns it off; a bad
// value is refused (22023); the startup packet's statement_timeout and
// options "-c statement_timeout=..." set it as well.
func TestStatementTimeout(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	ctx := context.Background()
	c := pgxConnect(t, f.dsn("alice", "", ""))
	if _, err := c.Exec(ctx, "SET statement_timeout = '150ms'"); err != nil {
		t.Fatal(err)
	}
	var shown string
	if err := c.QueryRow(ctx, "SHOW statement_timeout").Scan(&shown); err != nil || shown != "150ms" {
		t.Fatalf("SHOW statement_timeout = %q, %v", shown, err)
	}
	check := func(c *pgx.Conn, mode pgx.QueryExecMode) {
		t.Helper()
		start := time.Now()
		var n int64
		err := c.QueryRow(ctx, endless, mode).Scan(&n)
		wantState(t, err, "57014")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Message != "canceling statement due to statement timeout" {
			t.Fatalf("error %v, want the statement timeout's message", err)
		}
		if time.Since(start) > testutil.Scaled(time.Minute) {
			t.Fatalf("timeout took %v", time.Since(start))
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1", mode).Scan(&one); err != nil || one != 1 {
			t.Fatalf("after the timeout: %v", err)
		}
	}
	check(c, pgx.QueryExecModeSimpleProtocol)
	check(c, pgx.QueryExecModeExec)
	_, err := c.Exec(ctx, "SET statement_timeout = 'soon'")
	wantState(t, err, "22023")
	_, err = c.Exec(ctx, "SET statement_timeout = '5 fortnights'")
	wantState(t, err, "22023")
	if _, err := c.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM range(0, 1000)").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("without a timeout: %d %v", n, err)
	}
	for _, extra := range []string{"statement_timeout=100", "options=-c%20statement_timeout%3D100"} {
		check(pgxConnect(t, f.dsn("alice", "", extra)), pgx.QueryExecModeSimpleProtocol)
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "100": 100 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"2min": 2 * time.Minute, "250 ms": 250 * time.Millisecond, "10us": 10 * time.Microsecond} {
		if got, err := parseTimeout(in); err != nil || got != want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "x", "1 week", "1e99"} {
		if _, err := parseTimeout(in); err == nil {
			t.Errorf("parseTimeout(%q) accepted", in)
		}
	}
}
