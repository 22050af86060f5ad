package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// anyCmd wraps a Flight SQL command in the protobuf Any a CMD descriptor
// carries.
func anyCmd(t testing.TB, m proto.Message) []byte {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// descriptorSeeds are valid descriptors of every kind the service accepts:
// table paths, JSON tickets and each Flight SQL command GetFlightInfo,
// GetSchema or DoPut dispatches. Kind 0 is a PATH (elements separated by
// NUL bytes), 1 a CMD, 2 a descriptor of unknown type.
func descriptorSeeds(t testing.TB) []struct {
	kind uint8
	body []byte
} {
	str := func(s string) *string { return &s }
	cmds := []proto.Message{
		&pb.CommandStatementQuery{Query: "SELECT epoch, count(*) FROM clicks GROUP BY epoch"},
		&pb.CommandStatementQuery{Query: "SELECT * FROM events WHERE name LIKE 'a%'"},
		&pb.CommandStatementQuery{Query: "CREATE TABLE t (a BIGINT) USING memory"},
		&pb.CommandStatementQuery{Query: "SELECT 1", TransactionId: []byte("tx")},
		&pb.CommandStatementUpdate{Query: "DROP TABLE events"},
		&pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte(fuzzHandle)},
		&pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte("no such handle")},
		&pb.CommandPreparedStatementUpdate{PreparedStatementHandle: []byte(fuzzHandle)},
		&pb.CommandStatementIngest{Table: "events", TableDefinitionOptions: &pb.CommandStatementIngest_TableDefinitionOptions{
			IfExists: pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND}},
		&pb.CommandStatementIngest{Table: "clicks", Temporary: true},
		&pb.CommandGetCatalogs{},
		&pb.CommandGetDbSchemas{DbSchemaFilterPattern: str("def%")},
		&pb.CommandGetTables{TableNameFilterPattern: str("c_i%"), IncludeSchema: true, TableTypes: []string{"TABLE", "STREAMING TABLE"}},
		&pb.CommandGetTableTypes{},
		&pb.CommandGetSqlInfo{Info: []uint32{0, 1, 500, 1 << 31}},
		&pb.CommandGetPrimaryKeys{Table: "clicks"},
		&pb.CommandGetExportedKeys{Table: "clicks"},
		&pb.CommandGetImportedKeys{Table: "clicks"},
		&pb.CommandGetCrossReference{PkTable: "clicks", FkTable: "events"},
		&pb.CommandGetXdbcTypeInfo{},
		&pb.TicketStatementQuery{StatementHandle: []byte(`{"v":1,"query":"SELECT 1"}`)},
	}
	seeds := []struct {
		kind uint8
		body []byte
	}{
		{0, []byte("clicks")},
		{0, []byte("events")},
		{0, []byte("nope")},
		{0, []byte("clicks\x00extra")},
		{0, nil},
		{1, []byte(`{"v":1,"table":"clicks","since":0}`)},
		{1, []byte(`{"v":1,"table":"clicks","epoch":1,"with_epoch":true}`)},
		{1, []byte(`{"v":1,"query":"SELECT 1"}`)},
		{1, []byte("\x0a\x05hello")},
		{2, []byte("clicks")},
	}
	for _, c := range cmds {
		seeds = append(seeds, struct {
			kind uint8
			body []byte
		}{1, anyCmd(t, c)})
	}
	return seeds
}

// descriptorOf builds the descriptor an input describes.
func descriptorOf(kind uint8, body []byte) *flight.FlightDescriptor {
	switch kind % 3 {
	case 0:
		var path []string
		if len(body) > 0 {
			path = strings.Split(string(body), "\x00")
		}
		return &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: path}
	case 1:
		return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: body}
	}
	return &flight.FlightDescriptor{Type: pb.FlightDescriptor_DescriptorType(kind), Cmd: body, Path: []string{string(body)}}
}

// FuzzFlightDescriptor sends one descriptor — a table path, a JSON
// ticket, a Flight SQL command (valid ones from the seeds, mutated, or
// arbitrary bytes) — to GetFlightInfo, GetSchema and DoPut (with one
// batch of the events table), and reads every endpoint GetFlightInfo
// returns with DoGet. Invariants: no panic, no Internal error, no Arrow
// bytes or goroutines left behind, and the statement's bound parameters
// stay readable.
func FuzzFlightDescriptor(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range descriptorSeeds(f) {
		f.Add(s.kind, s.body)
	}
	batch := eventsRecord(fx.mem, []any{int64(7), "x", 0.5})
	f.Cleanup(batch.Release)
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		defer watchdog(20*time.Second, body)()
		fx.begin()
		desc := descriptorOf(kind, fx.withHandle(body))
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		svc := fx.srv.svc

		info, err := svc.GetFlightInfo(ctx, desc)
		fx.check(t, "GetFlightInfo", err)
		if err == nil {
			for i, ep := range info.GetEndpoint() {
				g := &fakeGet{fakeServerStream: fakeServerStream{ctx}}
				err := svc.DoGet(ep.GetTicket(), g)
				fx.check(t, fmt.Sprintf("DoGet of endpoint %d", i), err)
			}
		}
		_, err = svc.GetSchema(ctx, desc)
		fx.check(t, "GetSchema", err)

		stream := fx.ingest.reset()
		put := &fakePut{fakeServerStream: fakeServerStream{ctx}, in: flightMessages(t, fuzzEventsSchema, desc, batch)}
		err = svc.DoPut(put)
		checkIngested(t, stream, -1)
		stream.Close()
		fx.check(t, "DoPut", err)
		fx.checkBoundParams(t)
	})
}

// checkBoundParams fails when the fixture's prepared statement holds
// parameters that are not well-formed (for instance released ones).
func (fx *fuzzFixture) checkBoundParams(t *testing.T) {
	t.Helper()
	p, err := fx.srv.sql.prepared.get([]byte(fx.handle), "")
	if err != nil {
		t.Fatalf("the fixture's prepared statement is gone: %v", err)
	}
	params := p.paramsSnapshot()
	defer releaseAll(params)
	for i, r := range params {
		if err := validateRecord(r); err != nil {
			t.Fatalf("bound parameter batch %d is not well-formed: %v", i, err)
		}
	}
}

// FuzzFlightTicket sends one ticket to DoGet: a JSON ticket (table,
// epoch, since, with_epoch, query, count), a Flight SQL ticket (statement
// handle, prepared statement, metadata command) or arbitrary bytes.
// Invariants: no panic, no Internal error, nothing left allocated.
func FuzzFlightTicket(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range []string{
		`{"v":1,"table":"clicks"}`, `{"v":1,"table":"clicks","epoch":1}`, `{"v":1,"table":"clicks","since":-1}`,
		`{"v":1,"table":"clicks","since":1,"with_epoch":true}`, `{"v":1,"table":"clicks","with_epoch":true}`,
		`{"v":1,"table":"CLICKS","epoch":99}`, `{"v":1,"table":"events"}`, `{"v":1,"table":"system.streaming_queries"}`,
		`{"v":1,"query":"SELECT epoch, sum(x) FROM clicks GROUP BY epoch"}`, `{"v":1,"query":"SELECT * FROM events"}`,
		`{"v":1,"query":"DROP TABLE events"}`, `{"v":1,"count":3}`, `{"v":1}`, `{`,
	} {
		f.Add([]byte(s))
	}
	for _, m := range []proto.Message{
		&pb.TicketStatementQuery{StatementHandle: []byte(`{"v":1,"query":"SELECT i FROM clicks"}`)},
		&pb.TicketStatementQuery{StatementHandle: []byte(`{"v":1,"count":0}`)},
		&pb.TicketStatementQuery{StatementHandle: []byte(`{"v":1,"table":"clicks"}`)},
		&pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte(fuzzHandle)},
		&pb.CommandGetSqlInfo{Info: []uint32{0, 8, 1000}},
		&pb.CommandGetTables{IncludeSchema: true},
		&pb.CommandGetDbSchemas{},
		&pb.CommandGetCatalogs{},
		&pb.CommandGetTableTypes{},
		&pb.CommandGetPrimaryKeys{Table: "clicks"},
		&pb.CommandGetXdbcTypeInfo{},
		&pb.CommandStatementQuery{Query: "SELECT 1"},
	} {
		f.Add(anyCmd(f, m))
	}
	f.Fuzz(func(t *testing.T, ticket []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		defer watchdog(20*time.Second, ticket)()
		fx.begin()
		g := &fakeGet{fakeServerStream: fakeServerStream{ctx}}
		err := fx.srv.svc.DoGet(&flight.Ticket{Ticket: fx.withHandle(ticket)}, g)
		fx.check(t, "DoGet", err)
	})
}
