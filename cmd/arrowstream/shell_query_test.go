package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestQueryRefusesSubscribe: query prints whole results, so SUBSCRIBE
// is refused with where to run it. (A query of a stream goes to the
// server, which says to create a streaming table: clienterr_test.go.)
func TestQueryRefusesSubscribe(t *testing.T) {
	for _, stmt := range []string{"SUBSCRIBE t", "subscribe to t since epoch 3"} {
		env, _, errb := testEnv(nil)
		code := exitCode(queryCmd(context.Background(), []string{"--uri", "grpc://127.0.0.1:1", stmt}, env), "query", env.stderr)
		msg := errb.String()
		if code != 2 || !strings.Contains(msg, stmt+" never ends, and query prints whole results: follow it live with ") ||
			!strings.Contains(msg, " sql --uri grpc://127.0.0.1:1") {
			t.Errorf("%s: exit %d, stderr %q", stmt, code, msg)
		}
	}
}

// TestClientErrorSubscriptionEnded: a subscription the server ended
// (Unavailable) keeps the server's reason instead of "no server at".
func TestClientErrorSubscriptionEnded(t *testing.T) {
	err := status.Error(codes.Unavailable, "SUBSCRIBE: the server is shutting down; resume with SINCE EPOCH <last _epoch read>")
	got := clientError(err, "127.0.0.1:31337")
	if got.Error() != "SUBSCRIBE: the server is shutting down; resume with SINCE EPOCH <last _epoch read>" {
		t.Fatalf("got %q", got)
	}
	if !errors.Is(got, err) {
		t.Fatal("the gRPC error is not kept")
	}
	conn := status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:31337: connect: connection refused\"")
	if msg := clientError(conn, "127.0.0.1:31337").Error(); !strings.HasPrefix(msg, "no server at 127.0.0.1:31337: start one with ") {
		t.Fatalf("connection refused: %q", msg)
	}
}

// TestBannerNamesShell: the banner tells how to open the shell on the
// server, with the user's flags, in a form a POSIX shell takes as is.
func TestBannerNamesShell(t *testing.T) {
	fs, f, _ := newServeFlags()
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	f.flight.user = "o'brien"
	a := &app{flags: f, flight: fakeFlight("127.0.0.1:31337"), ckRoot: "/tmp/ck"}
	var out bytes.Buffer
	a.banner(&out, "test", nil)
	want := " sql --uri grpc://127.0.0.1:31337 --user 'o'\\''brien' --password \"$ARROWSTREAM_PASSWORD\"\n"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("banner lacks %q:\n%s", want, out.String())
	}
}
