package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/server"
)

// TestQueryNoServer: a refused connection says there is no server and how
// to start one, without gRPC's wrapping.
func TestQueryNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	env, _, errb := testEnv(nil)
	code := exitCode(queryCmd(context.Background(), []string{"--uri", "grpc://" + addr, "--timeout", "2m", "SELECT 1"}, env), "query", env.stderr)
	msg := errb.String()
	if code != 1 || !strings.Contains(msg, "no server at "+addr+": start one with ") || !strings.Contains(msg, " serve") {
		t.Errorf("exit %d, stderr %q", code, msg)
	}
	if strings.Contains(msg, "rpc error") || strings.Contains(msg, "code =") {
		t.Errorf("gRPC wrapping leaks: %q", msg)
	}
}

// TestQueryErrorsAndTrailingFlags runs query against the real Flight SQL
// server: server errors show as their message, VERSION AS OF an epoch not
// retained names the table and the retained epochs (not the operator),
// and flags after the SQL are taken.
func TestQueryErrorsAndTrailingFlags(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := newTestEngine(t)
	srv, err := startFlightServer(ctx, e, &flightConfig{addr: "127.0.0.1:0"}, &governFlags{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	uri := "grpc://" + srv.Addr()
	run := func(args ...string) (string, string, int) {
		env, out, errb := testEnv(nil)
		code := exitCode(queryCmd(ctx, args, env), "query", env.stderr)
		return out.String(), errb.String(), code
	}
	// Flags after the SQL argument.
	out, errs, code := run("SELECT 1 AS one", "--uri", uri, "--format", "csv")
	if code != 0 || out != "one\n1\n" {
		t.Fatalf("flags after the SQL: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code = run("SELECT 1", "--uri", uri, "SELECT 2"); code != 2 || !strings.Contains(errs, "got 2") {
		t.Errorf("two SQL arguments: exit %d: %s", code, errs)
	}
	if _, errs, code := run("--uri", uri, "SELECT nope"); code != 1 || strings.Contains(errs, "rpc error") || !strings.Contains(errs, "nope") {
		t.Errorf("bad SQL: exit %d: %q", code, errs)
	}
	// A streaming table with a committed epoch, read as of an epoch far
	// ahead.
	if _, errs, code := run("--uri", uri, "CREATE TABLE ticks USING `rate-micro-batch` OPTIONS (rowsPerBatch 5); CREATE STREAMING TABLE per5s AS SELECT value FROM STREAM ticks"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if tb, ok := e.sinks.Lookup("per5s"); ok && tb.LatestEpoch() >= 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("per5s committed no epoch in a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Strict properties, and a stream read in a batch context.
	for sql, want := range map[string]string{
		"CREATE STREAMING TABLE bad1 TBLPROPERTIES ('outputmod'='complete') AS SELECT count(*) AS n FROM STREAM ticks": "unknown option 'outputmod' of streaming table bad1 (did you mean 'outputMode'?)",
		"CREATE STREAMING TABLE bad2 TBLPROPERTIES ('colour'='blue') AS SELECT value FROM STREAM ticks":                "unknown option 'colour' of streaming table bad2 (known: ",
		"SELECT value FROM STREAM ticks": "a streaming source needs a streaming table: use CREATE STREAMING TABLE",
	} {
		_, errs, code := run("--uri", uri, sql)
		if code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "writeStream") {
			t.Errorf("%s: exit %d: %q, want %q", sql, code, errs, want)
		}
	}
	_, errs, code = run("--uri", uri, "SELECT * FROM per5s VERSION AS OF 100000")
	if code != 1 || !strings.Contains(errs, "table per5s: epoch 100000 is not committed yet (retained epochs ") {
		t.Errorf("VERSION AS OF 100000: exit %d: %q", code, errs)
	}
	for _, leak := range []string{"building", "Scan", "[value]", "rpc error"} {
		if strings.Contains(errs, leak) {
			t.Errorf("VERSION AS OF 100000 leaks %q: %q", leak, errs)
		}
	}
}

// TestQueryErrorTextGolden pins the whole stderr of query's error paths
// against a real server with a login: each says its class once (no
// "not found: ... not found", no "arrowstream query: arrowstream: "), names
// the table, and carries no gRPC wrapping.
func TestQueryErrorTextGolden(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := newTestEngine(t)
	auth, err := server.NewAuthenticator(server.AuthConfig{Users: map[string]string{"ann": "pw"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startFlightServer(ctx, e, &flightConfig{addr: "127.0.0.1:0"}, &governFlags{}, auth)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	uri := "grpc://" + srv.Addr()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	login := []string{"--uri", uri, "--user", "ann", "--password", "pw", "--timeout", "2m"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"drop a missing table", append(login, "DROP TABLE nosuch"),
			"arrowstream query: DROP TABLE `nosuch`: table or view not found\n"},
		{"select a missing table", append(login, "SELECT * FROM nosuch"),
			"arrowstream query: The table or view `nosuch` cannot be found. Did you mean one of the following? [`system.query_progress`, `system.streaming_queries`]. (at 1:15)\n"},
		{"syntax error", append(login, "SELEC 1"),
			"arrowstream query: syntax error at 1:1: expected a statement (SELECT, WITH, CREATE, EXPLAIN, DROP, SHOW, DESCRIBE or SET), found 'SELEC'\n"},
		{"unknown column", append(login, "SELECT nocol FROM (SELECT 1 AS a)"),
			"arrowstream query: A column or function parameter with name `nocol` cannot be resolved. Did you mean one of the following? [`a`]. (at 1:8)\n"},
		{"wrong password", []string{"--uri", uri, "--user", "ann", "--password", "bad", "SELECT 1"},
			"arrowstream query: log in as ann: invalid user name or password (check --user and --password)\n"},
		{"no login", []string{"--uri", uri, "SELECT 1"},
			"arrowstream query: not authenticated: authentication required: log in with a Handshake (basic auth) and send the bearer token it returns (pass --user and --password)\n"},
		{"no server", []string{"--uri", "grpc://" + gone, "--timeout", "2m", "SELECT 1"},
			"arrowstream query: no server at " + gone + ": start one with " + selfCommand() + " serve (or pass --uri)\n"},
	} {
		env, _, errb := testEnv(nil)
		code := exitCode(queryCmd(ctx, c.args, env), "query", env.stderr)
		if got := errb.String(); code != 1 || got != c.want {
			t.Errorf("%s: exit %d, stderr\n%q\nwant\n%q", c.name, code, got, c.want)
		}
	}
}
