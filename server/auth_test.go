package server

import (
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// everyCall makes one call of each Flight RPC with ctx and returns the
// errors by name.
func everyCall(ctx context.Context, c flight.Client) map[string]error {
	out := map[string]error{}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}}
	ticket, _ := TableTicket("orders")
	recv := func(name string, s interface{ Recv() (any, error) }, err error) {
		if err == nil {
			_, err = s.Recv()
		}
		out[name] = err
	}
	ls, err := c.ListFlights(ctx, &flight.Criteria{})
	recv("ListFlights", recvAny(ls), err)
	_, out["GetFlightInfo"] = c.GetFlightInfo(ctx, desc)
	_, out["GetSchema"] = c.GetSchema(ctx, desc)
	_, out["PollFlightInfo"] = c.PollFlightInfo(ctx, desc)
	dg, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	recv("DoGet", recvAny(dg), err)
	dp, err := c.DoPut(ctx)
	if err == nil {
		dp.Send(&flight.FlightData{FlightDescriptor: desc})
		dp.CloseSend()
	}
	recv("DoPut", recvAny(dp), err)
	da, err := c.DoAction(ctx, &flight.Action{Type: flightsql.ClosePreparedStatementActionType})
	recv("DoAction", recvAny(da), err)
	la, err := c.ListActions(ctx, &flight.Empty{})
	recv("ListActions", recvAny(la), err)
	dx, err := c.DoExchange(ctx)
	if err == nil {
		dx.CloseSend()
	}
	recv("DoExchange", recvAny(dx), err)
	hs, err := c.Handshake(ctx)
	if err == nil {
		hs.CloseSend()
	}
	recv("Handshake", recvAny(hs), err)
	return out
}

// recvAny adapts the typed Recv of generated stream clients.
func recvAny[T any](s interface{ Recv() (T, error) }) interface{ Recv() (any, error) } {
	return anyRecv[T]{s}
}

type anyRecv[T any] struct {
	s interface{ Recv() (T, error) }
}

func (a anyRecv[T]) Recv() (any, error) {
	if a.s == nil {
		return nil, io.EOF
	}
	return a.s.Recv()
}

func TestAuthRejectsEveryCallWithoutAToken(t *testing.T) {
	hash, err := hashPassword("hunter2", 1000) // cheap: the format is what matters here
	if err != nil {
		t.Fatal(err)
	}
	f := newSQLFixture(t, Config{Auth: AuthConfig{Users: map[string]string{"alice": "s3cret", "bob": hash}}})
	c := flightClient(t, f.srv)
	ctx := context.Background()

	for name, err := range everyCall(ctx, c) {
		if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
			t.Errorf("%s without a token: %v, want Unauthenticated", name, err)
		}
	}
	bad := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer not-a-token")
	for name, err := range everyCall(bad, c) {
		if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
			t.Errorf("%s with a bad token: %v, want Unauthenticated", name, err)
		}
	}
	for _, cred := range [][2]string{{"alice", "wrong"}, {"mallory", "s3cret"}, {"bob", "s3cret"}} {
		_, err := c.AuthenticateBasicToken(ctx, cred[0], cred[1])
		wantCode(t, err, codes.Unauthenticated)
	}
	// Malformed basic credentials are rejected, not crashed on.
	for _, h := range []string{"Basic", "Basic !!!", "Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")), "Digest x"} {
		hs, err := c.Handshake(metadata.AppendToOutgoingContext(ctx, "authorization", h))
		if err == nil {
			hs.CloseSend()
			_, err = hs.Recv()
		}
		wantCode(t, err, codes.Unauthenticated)
	}

	for _, cred := range [][2]string{{"alice", "s3cret"}, {"bob", "hunter2"}} {
		authed, err := c.AuthenticateBasicToken(ctx, cred[0], cred[1])
		if err != nil {
			t.Fatalf("%s: %v", cred[0], err)
		}
		info, err := c.GetFlightInfo(authed, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}})
		if err != nil || info.TotalRecords != 500 {
			t.Fatalf("%s: GetFlightInfo %v %v", cred[0], info, err)
		}
		_, recs, err := readAll(authed, c, info.Endpoint[0].Ticket.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		releaseAll(recs)
	}

	// Tokens expire.
	authed, _ := c.AuthenticateBasicToken(ctx, "alice", "s3cret")
	setNow := func(now func() time.Time) {
		f.srv.auth.mu.Lock()
		f.srv.auth.now = now
		f.srv.auth.mu.Unlock()
	}
	setNow(func() time.Time { return time.Now().Add(DefaultTokenTTL + time.Minute) })
	_, err = c.GetFlightInfo(authed, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}})
	wantCode(t, err, codes.Unauthenticated)
	setNow(time.Now)
}

func TestAuthADBCAndPreparedStatementOwnership(t *testing.T) {
	f := newSQLFixture(t, Config{Auth: AuthConfig{Users: map[string]string{"alice": "a", "bob": "b"}}})
	cn := adbcConn(t, f.srv, map[string]string{adbc.OptionKeyUsername: "alice", adbc.OptionKeyPassword: "a"})
	if recs := mustQuery(t, cn, "SELECT * FROM orders"); len(recs) == 0 {
		t.Fatal("no rows")
	}
	db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(map[string]string{
		adbc.OptionKeyURI: "grpc://" + f.srv.Addr().String(), adbc.OptionKeyUsername: "alice", adbc.OptionKeyPassword: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Open(context.Background())
	wantADBC(t, err, adbc.StatusUnauthenticated, "invalid user name or password")

	// A prepared statement belongs to the user who created it.
	ctx := context.Background()
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	actx, err := cl.Client.AuthenticateBasicToken(ctx, "alice", "a")
	if err != nil {
		t.Fatal(err)
	}
	bctx, err := cl.Client.AuthenticateBasicToken(ctx, "bob", "b")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cl.Prepare(actx, "SELECT * FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ps.Execute(bctx)
	wantCode(t, err, codes.NotFound)
	if _, err := ps.Execute(actx); err != nil {
		t.Fatal(err)
	}
	if err := ps.Close(actx); err != nil {
		t.Fatal(err)
	}
}

func TestUsersFile(t *testing.T) {
	hash, _ := HashPassword("pw2") // the real cost, once
	if !strings.HasPrefix(hash, "pbkdf2-sha256$600000$") {
		t.Fatalf("hash %q", hash)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "users")
	os.WriteFile(path, []byte("# users\n\nann:pw1\nben:"+hash+"\n"), 0o600)
	users, _, err := loadUsers(AuthConfig{UsersFile: path, Users: map[string]string{"cy": "pw3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !users["ann"].matches("pw1") || !users["ben"].matches("pw2") || !users["cy"].matches("pw3") ||
		users["ann"].matches("pw2") || users["ben"].matches("pw1") {
		t.Fatal("password checks are wrong")
	}
	for _, bad := range []string{"nocolon\n", "a:x\na:y\n", ":pw\n", "a:pbkdf2-sha256$1$!!$x\n", "a:pbkdf2-sha256$0$YQ$YQ\n", "# only comments\n"} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, _, err := loadUsers(AuthConfig{UsersFile: path}); err == nil {
			t.Errorf("users file %q accepted", bad)
		} else if strings.Contains(err.Error(), "pw") && !strings.Contains(bad, "pbkdf2") {
			t.Errorf("error %q echoes a secret", err)
		}
	}
	if _, _, err := loadUsers(AuthConfig{UsersFile: filepath.Join(dir, "missing")}); err == nil {
		t.Error("missing users file accepted")
	}
}
