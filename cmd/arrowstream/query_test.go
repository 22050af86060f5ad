package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeFlightSQL is a minimal Flight SQL test double over a test engine
// (statement queries and updates only), to test the query subcommand
// without the server package. The real server is tested in its package.
type fakeFlightSQL struct {
	flightsql.BaseServer
	e *engine
}

func (f *fakeFlightSQL) GetFlightInfoStatement(ctx context.Context, q flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	res, err := f.e.SQL(ctx, q.GetQuery())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	schema := res.Schema
	res.Close()
	ticket, err := flightsql.CreateStatementQueryTicket([]byte(q.GetQuery()))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, f.e.session.Allocator()),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		TotalRecords:     -1, TotalBytes: -1,
	}, nil
}

func (f *fakeFlightSQL) DoGetStatement(ctx context.Context, t flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	res, err := f.e.SQL(ctx, string(t.GetStatementHandle()))
	if err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ch := make(chan flight.StreamChunk)
	go func() {
		defer close(ch)
		defer res.Close()
		each(ctx, res.Op, func(rec arrow.Record) error {
			rec.Retain() // the stream releases what it sends
			ch <- flight.StreamChunk{Data: rec}
			return nil
		})
	}()
	return res.Schema, ch, nil
}

func (f *fakeFlightSQL) DoPutCommandStatementUpdate(ctx context.Context, u flightsql.StatementUpdate) (int64, error) {
	res, err := f.e.SQL(ctx, u.GetQuery())
	if err != nil {
		return 0, status.Error(codes.InvalidArgument, err.Error())
	}
	res.Close()
	return 0, nil
}

type testValidator struct{}

func (testValidator) Validate(user, password string) (string, error) {
	if user == "alice" && password == "secret" {
		return "token-alice", nil
	}
	return "", errors.New("wrong user or password")
}

func (testValidator) IsValid(token string) (any, error) {
	if token == "token-alice" {
		return "alice", nil
	}
	return nil, errors.New("bad token")
}

// startFakeFlightSQL serves a fakeFlightSQL with basic auth on loopback.
func startFakeFlightSQL(t *testing.T, e *engine) string {
	t.Helper()
	srv := flight.NewServerWithMiddleware([]flight.ServerMiddleware{flight.CreateServerBasicAuthMiddleware(testValidator{})})
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	srv.RegisterFlightService(flightsql.NewFlightServer(&fakeFlightSQL{e: e}))
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	return "grpc://" + srv.Addr().String()
}

func TestQueryCommand(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t)
	uri := startFakeFlightSQL(t, e)
	auth := []string{"--uri", uri, "--user", "alice", "--password", "secret"}

	run := func(args ...string) (string, string, int) {
		env, out, errb := testEnv(nil)
		code := exitCode(queryCmd(ctx, append(append([]string{}, auth...), args...), env), "query", env.stderr)
		return out.String(), errb.String(), code
	}
	// A command, then a query, in one argument.
	out, errs, code := run("CREATE TABLE ticks USING `rate-micro-batch` OPTIONS (rowsPerBatch 5); SELECT 1 AS one, 'a;b' AS s")
	if code != 0 || out != "OK\n+-----+-----+\n| one | s   |\n+-----+-----+\n|   1 | a;b |\n+-----+-----+\n(1 row)\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	out, _, code = run("--format", "csv", "SHOW TABLES")
	if code != 0 || out != "tableName,isStreaming\nticks,true\n" {
		t.Fatalf("csv: exit %d: %q", code, out)
	}
	out, _, code = run("--format", "json", "SELECT 2 AS two, CAST(NULL AS STRING) AS s")
	if code != 0 || out != `{"two":2,"s":null}`+"\n" {
		t.Fatalf("json: exit %d: %q", code, out)
	}
	// Errors: the server's message, exit status 1.
	_, errs, code = run("SELECT nope")
	if code != 1 || !strings.Contains(errs, "nope") {
		t.Fatalf("bad SQL: exit %d: %s", code, errs)
	}
	env, _, errb := testEnv(nil)
	code = exitCode(queryCmd(ctx, []string{"--uri", uri, "--user", "alice", "--password", "wrong", "SELECT 1"}, env), "query", env.stderr)
	if code != 1 || !strings.Contains(errb.String(), "log in as alice: wrong user or password") {
		t.Fatalf("wrong password: exit %d: %s", code, errb)
	}
	for _, bad := range [][]string{{"--uri", "http://x:1", "SELECT 1"}, {"--format", "arrow", "SELECT 1; SELECT 2"}, {}, {" ; "}} {
		env, _, errb := testEnv(nil)
		if code := exitCode(queryCmd(ctx, bad, env), "query", env.stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2: %s", bad, code, errb)
		}
	}
}

func TestReturnsRows(t *testing.T) {
	for stmt, want := range map[string]bool{
		"SELECT 1": true, "  (SELECT 1)": true, "with a as (select 1) select * from a": true,
		"SHOW TABLES": true, "describe history t": true, "EXPLAIN SELECT 1": true,
		"CREATE TABLE t USING rate": false, "DROP TABLE t": false, "create streaming table x as select 1": false,
	} {
		if returnsRows(stmt) != want {
			t.Errorf("returnsRows(%q) = %v", stmt, !want)
		}
	}
}
