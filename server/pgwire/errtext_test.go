package pgwire

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/server"
)

// syncBuffer is a log destination shared by the connections' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestErrorMessageWithoutProgramPrefix: a PostgreSQL client (pgx, over
// the simple and the extended protocol) gets a bad statement's message as
// PostgreSQL words its own, without the "arrowstream: " the engine's
// errors start with (psql showed "ERROR:  arrowstream: TRUNCATE TABLE:
// table or view not found: ..."), with its SQLSTATE; the server's log
// keeps the whole text; a Flight SQL client still gets the whole text.
func TestErrorMessageWithoutProgramPrefix(t *testing.T) {
	var logs syncBuffer
	f := startFixture(t, fixtureOpts{server: func(c *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}})
	cases := []struct{ stmt, code, want string }{
		{"TRUNCATE TABLE nosuch_table", stateUndefinedTable, "TRUNCATE TABLE: table or view not found: nosuch_table"},
		{"DROP TABLE nosuch_table", stateUndefinedTable, "DROP TABLE `nosuch_table`: table or view not found"},
		{"CREATE TABLE t1 USING nosuchformat", stateSyntaxOrAccess, `table t1: unknown source format "nosuchformat"`},
	}
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx := context.Background()
	for _, tc := range cases {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheDescribe} {
			_, err := c.Exec(ctx, tc.stmt, mode)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				t.Fatalf("%s (%v): %v (%T), want a PostgreSQL error", tc.stmt, mode, err, err)
			}
			if pe.Code != tc.code || !strings.HasPrefix(pe.Message, tc.want) {
				t.Errorf("%s (%v): SQLSTATE %s, message %q; want %s, a message starting %q", tc.stmt, mode, pe.Code, pe.Message, tc.code, tc.want)
			}
			var one int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after %s (%v): %v", tc.stmt, mode, err)
			}
		}
		// The log keeps the whole text, with the SQLSTATE sent.
		if got := logs.String(); !strings.Contains(got, "sqlstate="+tc.code+" ") ||
			!strings.Contains(got, "arrowstream: "+strings.ReplaceAll(tc.want, `"`, `\"`)) {
			t.Errorf("the server's log does not hold the whole text of %s's error:\n%s", tc.stmt, got)
		}
	}

	// Flight SQL, the other client, is answered as before: the whole text.
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = cl.ExecuteUpdate(ctx, cases[0].stmt)
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || !strings.HasPrefix(st.Message(), "arrowstream: "+cases[0].want) {
		t.Errorf("Flight SQL: %v, want NotFound with a message starting %q", err, "arrowstream: "+cases[0].want)
	}
}
