package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arrowstream/arrowstream/memsink"
)

func sqlClient(t testing.TB, s *Server) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(s.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// drainInfo reads every endpoint of info (a call that only fails when
// its stream is read fails here).
func drainInfo(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) error {
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return err
		}
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// flightSQLCalls makes every Flight SQL call with ctx. Calls on a prepared
// statement use ps (created with another context) and calls that replay a
// ticket use ticket, so that a call without credentials reaches the
// server's checks for each command kind.
func flightSQLCalls(ctx context.Context, cl *flightsql.Client, ps *flightsql.PreparedStatement, ticket *flight.Ticket) map[string]error {
	out := map[string]error{}
	info := func(name string, _ any, err error) { out[name] = err }
	ref := flightsql.TableRef{Table: "orders"}
	r, err := cl.Execute(ctx, "SELECT * FROM orders")
	info("CommandStatementQuery", r, err)
	s, err := cl.GetExecuteSchema(ctx, "SELECT * FROM orders")
	info("GetSchema(CommandStatementQuery)", s, err)
	// DoPut commands go through the raw client: flightsql's helpers
	// return the io.EOF of a Send to a stream the server has already
	// ended, racing with the status that Recv reports.
	out["CommandStatementUpdate"] = putCommand(ctx, cl, &pb.CommandStatementUpdate{Query: "CREATE TABLE t2 (a BIGINT) USING memory"})
	out["CommandStatementIngest"] = putCommand(ctx, cl, &pb.CommandStatementIngest{Table: "orders",
		TableDefinitionOptions: &flightsql.TableDefinitionOptions{IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}})
	_, out["ActionCreatePreparedStatementRequest"] = cl.Prepare(ctx, "SELECT * FROM orders")
	r, err = cl.GetCatalogs(ctx)
	info("CommandGetCatalogs", r, err)
	r, err = cl.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
	info("CommandGetDbSchemas", r, err)
	r, err = cl.GetTables(ctx, &flightsql.GetTablesOpts{IncludeSchema: true})
	info("CommandGetTables", r, err)
	r, err = cl.GetTableTypes(ctx)
	info("CommandGetTableTypes", r, err)
	r, err = cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName})
	info("CommandGetSqlInfo", r, err)
	r, err = cl.GetPrimaryKeys(ctx, ref)
	info("CommandGetPrimaryKeys", r, err)
	r, err = cl.GetExportedKeys(ctx, ref)
	info("CommandGetExportedKeys", r, err)
	r, err = cl.GetImportedKeys(ctx, ref)
	info("CommandGetImportedKeys", r, err)
	r, err = cl.GetCrossReference(ctx, ref, ref)
	info("CommandGetCrossReference", r, err)
	r, err = cl.GetXdbcTypeInfo(ctx, nil)
	info("CommandGetXdbcTypeInfo", r, err)
	_, out["ActionBeginTransactionRequest"] = cl.BeginTransaction(ctx)
	_, out["CommandStatementSubstraitPlan"] = cl.ExecuteSubstrait(ctx, flightsql.SubstraitPlan{Plan: []byte{1}})
	_, out["CancelFlightInfo"] = cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: &flight.FlightInfo{}})
	_, out["RenewFlightEndpoint"] = cl.RenewFlightEndpoint(ctx, &flight.RenewFlightEndpointRequest{Endpoint: &flight.FlightEndpoint{Ticket: ticket}})
	_, out["SetSessionOptions"] = cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{})
	_, out["GetSessionOptions"] = cl.GetSessionOptions(ctx, &flight.GetSessionOptionsRequest{})
	_, out["CloseSession"] = cl.CloseSession(ctx, &flight.CloseSessionRequest{})
	r, err = ps.Execute(ctx)
	info("CommandPreparedStatementQuery", r, err)
	s, err = ps.GetSchema(ctx)
	info("GetSchema(CommandPreparedStatementQuery)", s, err)
	out["DoPut(CommandPreparedStatementQuery)"] = putCommand(ctx, cl, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: ps.Handle()})
	out["CommandPreparedStatementUpdate"] = putCommand(ctx, cl, &pb.CommandPreparedStatementUpdate{PreparedStatementHandle: ps.Handle()})
	out["ActionClosePreparedStatementRequest"] = ps.Close(ctx)
	rd, err := cl.DoGet(ctx, ticket)
	if err == nil {
		rd.Next()
		err = rd.Err()
		rd.Release()
	}
	out["DoGet(TicketStatementQuery)"] = err
	return out
}

// putCommand sends a Flight SQL command as a DoPut descriptor with no
// data and returns the call's status.
func putCommand(ctx context.Context, cl *flightsql.Client, cmd proto.Message) error {
	a, err := anypb.New(cmd)
	if err != nil {
		return err
	}
	b, err := proto.Marshal(a)
	if err != nil {
		return err
	}
	stream, err := cl.Client.DoPut(ctx)
	if err != nil {
		return err
	}
	stream.Send(&flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: b}})
	stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestAuthRejectsEveryFlightSQLCommand: with authentication on, every
// Flight SQL command (metadata ones included), every prepared-statement
// operation and every ticket replay is refused without a valid token,
// and the same calls are not refused as unauthenticated with one.
func TestAuthRejectsEveryFlightSQLCommand(t *testing.T) {
	f := newSQLFixture(t, Config{Auth: AuthConfig{Users: map[string]string{"alice": "s3cret"}}})
	cl := sqlClient(t, f.srv)
	ctx := context.Background()
	authed, err := cl.Client.AuthenticateBasicToken(ctx, "alice", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cl.Execute(authed, "SELECT * FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	ticket := info.Endpoint[0].Ticket
	for _, bad := range []struct {
		name string
		ctx  context.Context
	}{
		{"no token", ctx},
		{"bad token", metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer not-a-token")},
		{"basic credentials on a call", metadata.AppendToOutgoingContext(ctx, "authorization", "Basic YWxpY2U6czNjcmV0")},
	} {
		t.Run(bad.name, func(t *testing.T) {
			ps, err := cl.Prepare(authed, "SELECT * FROM orders WHERE epoch = ?")
			if err != nil {
				t.Fatal(err)
			}
			defer ps.Close(authed)
			calls := flightSQLCalls(bad.ctx, cl, ps, ticket)
			if len(calls) < 28 {
				t.Fatalf("only %d calls made", len(calls))
			}
			for name, err := range calls {
				if status.Code(err) != codes.Unauthenticated {
					t.Errorf("%s: %v, want Unauthenticated", name, err)
				}
			}
		})
	}
	// With the token none of them is refused as unauthenticated (they
	// succeed or fail for their own reasons).
	ps, err := cl.Prepare(authed, "SELECT * FROM orders WHERE epoch = ?")
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range flightSQLCalls(authed, cl, ps, ticket) {
		if status.Code(err) == codes.Unauthenticated {
			t.Errorf("%s with a token: %v", name, err)
		}
	}
}

// TestTLSWrongCAFails: a client that trusts another CA cannot connect.
func TestTLSWrongCAFails(t *testing.T) {
	pki, other := newTestPKI(t), newTestPKI(t)
	f := newSQLFixture(t, Config{TLS: TLSConfig{CertFile: pki.serverCert, KeyFile: pki.serverKey}})
	err := listOnce(f.srv, &tls.Config{RootCAs: other.pool})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("server certified by another CA accepted: %v", err)
	}
	if err := listOnce(f.srv, &tls.Config{RootCAs: pki.pool}); err != nil {
		t.Fatalf("the right CA: %v", err)
	}
}

// grantsFixture: alice may read orders, bob everything, carol the system
// table only; a table "secret" exists besides orders.
func grantsFixture(t *testing.T) (*sqlFixture, map[string]context.Context, *flightsql.Client) {
	t.Helper()
	f := newSQLFixture(t, Config{Auth: AuthConfig{
		Users:      map[string]string{"alice": "a", "bob": "b", "carol": "c", "dave": "d"},
		ReadGrants: map[string][]string{"alice": {"Orders"}, "bob": {"*"}, "carol": {"system.streaming_queries"}},
	}})
	secret := newTable(t, f.mem, f.cat, "secret", epochSchema, memsink.Options{})
	commitEpochs(t, f.mem, secret, 0, 1, 10)
	cl := sqlClient(t, f.srv)
	ctxs := map[string]context.Context{}
	for user, pw := range map[string]string{"alice": "a", "bob": "b", "carol": "c", "dave": "d"} {
		ctx, err := cl.Client.AuthenticateBasicToken(context.Background(), user, pw)
		if err != nil {
			t.Fatal(err)
		}
		ctxs[user] = ctx
	}
	return f, ctxs, cl
}

// visibleTables lists what GetTables and ListFlights show a user.
func visibleTables(t *testing.T, ctx context.Context, cl *flightsql.Client) (getTables, listFlights string) {
	t.Helper()
	info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rdr.Next() {
		rec := rdr.Record()
		for i := range int(rec.NumRows()) {
			names = append(names, rec.Column(1).(*array.String).Value(i)+"."+rec.Column(2).(*array.String).Value(i))
		}
	}
	rdr.Release()
	ls, err := cl.Client.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		t.Fatal(err)
	}
	var flights []string
	for {
		fi, err := ls.Recv()
		if err != nil {
			break
		}
		flights = append(flights, strings.Join(fi.FlightDescriptor.Path, "."))
	}
	return strings.Join(names, ","), strings.Join(flights, ",")
}

func TestReadGrantsHideTables(t *testing.T) {
	_, ctxs, cl := grantsFixture(t)
	for _, tc := range []struct{ user, tables, flights string }{
		{"alice", "default.orders", "orders"},
		{"bob", "default.orders,default.secret,system.query_progress,system.streaming_queries", "orders,secret"},
		{"carol", "system.streaming_queries", ""},
		{"dave", "", ""},
	} {
		tables, flights := visibleTables(t, ctxs[tc.user], cl)
		if tables != tc.tables || flights != tc.flights {
			t.Errorf("%s sees tables [%s] and flights [%s], want [%s] and [%s]", tc.user, tables, flights, tc.tables, tc.flights)
		}
	}

	// For alice, secret is indistinguishable from a table that does not
	// exist, through every path that names a table.
	alice := ctxs["alice"]
	seen := map[string]map[string]string{}
	for _, name := range []string{"secret", "missing"} {
		desc := &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}}
		tk, _ := TableTicket(name)
		calls := map[string]error{}
		_, calls["GetFlightInfo(PATH)"] = cl.Client.GetFlightInfo(alice, desc)
		_, calls["GetSchema(PATH)"] = cl.Client.GetSchema(alice, desc)
		dg, err := cl.Client.DoGet(alice, &flight.Ticket{Ticket: tk})
		if err == nil {
			_, err = dg.Recv()
		}
		calls["DoGet(table ticket)"] = err
		_, calls["Execute"] = cl.Execute(alice, "SELECT * FROM "+name)
		_, calls["GetExecuteSchema"] = cl.GetExecuteSchema(alice, "SELECT count(*) FROM "+name)
		_, calls["Prepare"] = cl.Prepare(alice, "SELECT * FROM "+name)
		_, calls["Execute(system table)"] = cl.Execute(alice, "SELECT * FROM system.streaming_queries")
		msgs := map[string]string{}
		for call, err := range calls {
			if status.Code(err) != codes.NotFound {
				t.Errorf("alice %s %s: %v, want NotFound", call, name, err)
			}
			msgs[call] = strings.ReplaceAll(status.Convert(err).Message(), name, "<name>")
		}
		seen[name] = msgs
	}
	for call, msg := range seen["secret"] {
		if other := seen["missing"][call]; msg != other {
			t.Errorf("%s: a hidden table answers %q, a missing one %q", call, msg, other)
		}
	}
	// Alice reads what she was granted.
	info, err := cl.Execute(alice, "SELECT * FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := drainInfo(alice, cl, info); err != nil {
		t.Fatal(err)
	}
	// A restricted user runs no commands and ingests nothing (DDL could
	// read any table through CREATE ... AS SELECT).
	_, err = cl.ExecuteUpdate(alice, "CREATE TABLE t2 (a BIGINT) USING memory")
	wantCode(t, err, codes.PermissionDenied)
	_, err = cl.ExecuteUpdate(ctxs["bob"], "CREATE TABLE t2 (a BIGINT) USING memory")
	if err != nil {
		t.Fatalf("bob's DDL: %v", err)
	}
	// Bob reads secret; carol the system table.
	for user, text := range map[string]string{"bob": "SELECT * FROM secret", "carol": "SELECT * FROM system.streaming_queries"} {
		info, err := cl.Execute(ctxs[user], text)
		if err == nil {
			err = drainInfo(ctxs[user], cl, info)
		}
		if err != nil {
			t.Errorf("%s: %s: %v", user, text, err)
		}
	}
}

func TestReadGrantsConfig(t *testing.T) {
	for _, tc := range []struct {
		auth AuthConfig
		want string
	}{
		{AuthConfig{ReadGrants: map[string][]string{"a": {"*"}}}, "need authentication"},
		{AuthConfig{Users: map[string]string{"a": "x"}, ReadGrants: map[string][]string{"a": {"*"}, "zed": {"t"}}}, "unknown users: zed"},
	} {
		_, err := New(Config{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), Auth: tc.auth})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.auth.ReadGrants, err, tc.want)
		}
	}
	if _, err := New(Config{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(),
		Auth: AuthConfig{Users: map[string]string{"a": "x"}, ReadGrants: map[string][]string{"a": {"t"}}}}); err != nil {
		t.Fatal(err)
	}
}

// TestReadGrantsSessionEngine: the real planner behind the server sees
// only granted tables: joins, EXPLAIN and "did you mean" suggestions
// reveal nothing; SHOW TABLES and DESCRIBE are refused to restricted users.
func TestReadGrantsSessionEngine(t *testing.T) {
	sess, _ := startSessionServer(t) // a session with cleanups; its open server is not used
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	mem := sess.Allocator()
	for _, name := range []string{"orders", "secret_salaries"} {
		tab := newTable(t, mem, cat, name, epochSchema, memsink.Options{})
		commitEpochs(t, mem, tab, 0, 1, 5)
		t.Cleanup(func() {
			if tb, ok := cat.Drop(name); ok {
				tb.Close()
			}
		})
	}
	cfg := ForSession(sess, cat)
	cfg.Auth = AuthConfig{Users: map[string]string{"alice": "a"}, ReadGrants: map[string][]string{"alice": {"orders"}}}
	srv := startServer(t, cfg)
	cl := sqlClient(t, srv)
	alice, err := cl.Client.AuthenticateBasicToken(context.Background(), "alice", "a")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cl.Execute(alice, "SELECT count(*) FROM orders")
	if err == nil {
		err = drainInfo(alice, cl, info)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		code codes.Code
	}{
		{"SELECT * FROM secret_salaries", codes.NotFound},
		{"SELECT * FROM orders o JOIN secret_salaries s ON o.i = s.i", codes.NotFound},
		{"EXPLAIN SELECT * FROM secret_salaries", codes.NotFound},
		{"SELECT * FROM secret_salarie", codes.NotFound}, // no suggestion of the hidden name
		{"SELECT * FROM system.streaming_queries", codes.NotFound},
		{"SHOW TABLES", codes.PermissionDenied},
		{"DESCRIBE orders", codes.PermissionDenied},
	} {
		_, err := cl.Execute(alice, tc.text)
		if status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.text, err, tc.code)
			continue
		}
		if msg := status.Convert(err).Message(); strings.Contains(msg, "secret_salaries") && !strings.Contains(tc.text, "secret_salaries") {
			t.Errorf("%s: message %q names a hidden table", tc.text, msg)
		}
	}
}

// TestMaxMessageBytes: the server refuses a message over the limit and
// slices what it sends so that a client with the same limit reads a table
// far larger than one message.
func TestMaxMessageBytes(t *testing.T) {
	const limit = 64 << 10
	f := newSQLFixture(t, Config{Limits: Limits{MaxMessageBytes: limit}})
	big := newTable(t, f.mem, f.cat, "big", epochSchema, memsink.Options{})
	commitEpochs(t, f.mem, big, 0, 1, 20000) // one 480 KB record
	c := flightClient(t, f.srv, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limit), grpc.MaxCallSendMsgSize(1<<20)))
	ctx := context.Background()
	tk, _ := TableTicket("big")
	_, recs, err := readAll(ctx, c, tk)
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
	}
	releaseAll(recs)
	if rows != 20000 || len(recs) < 8 {
		t.Fatalf("%d rows in %d messages, want 20000 rows in messages under %d bytes", rows, len(recs), limit)
	}
	_, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: make([]byte, 2*limit)})
	wantCode(t, err, codes.ResourceExhausted)
	// The server still serves.
	if _, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"big"}}); err != nil {
		t.Fatal(err)
	}
}
