package security

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// TestLongErrorMessagesBounded: an error quoting a large input (a cast of
// a 20 MB value, a 100 KB one) reaches the client as the error, its
// message bounded, the server up. Before, the message went whole into the
// gRPC trailers: a 20 MB one broke the Go client's stream (the command
// line said "no server"), and any past 8 KiB broke clients with gRPC
// C++'s and Java's default metadata limit (emulated by a Go client with
// that limit).
func TestLongErrorMessagesBounded(t *testing.T) {
	e := startServe(t)
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.InvalidArgument {
			t.Fatalf("%s: code %v (%.300s), want InvalidArgument", what, st.Code(), err)
		}
		msg := st.Message()
		if len(msg) > 5<<10 || !strings.Contains(msg, "CAST") || !strings.Contains(msg, "bytes left out") ||
			!strings.Contains(msg, "xxxx") {
			t.Errorf("%s: message of %d bytes: %.300s", what, len(msg), msg)
		}
	}
	c := e.admin()
	_, err := c.run(t, "SELECT CAST(repeat('x', 20000000) AS INT)")
	check("20 MB value, default client", err)
	e.alive(t)

	// A client that takes at most 8 KiB of metadata.
	cl, err := flightsql.NewClient(e.flight, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithMaxHeaderListSize(8<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx, err = cl.Client.AuthenticateBasicToken(ctx, adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	small := &client{Client: cl, ctx: ctx}
	_, err = small.run(t, "SELECT CAST(repeat('x', 100000) AS INT)")
	check("100 KB value, 8 KiB metadata client", err)
	e.alive(t)
}
