package server

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

func TestQueryMemoryLimit(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{QueryMemoryBytes: 1 << 20}})
	cn := adbcConn(t, f.srv, nil)
	ctx := context.Background()
	if recs := mustQuery(t, cn, "SELECT alloc(100000)"); recs[0].NumRows() != 1 {
		t.Fatal("small allocation failed")
	}
	_, err := query(ctx, cn, "SELECT alloc(5000000)", nil)
	// ADBC v1.1.0 reports ResourceExhausted as Internal, message intact.
	wantADBC(t, err, adbc.StatusInternal, "query exceeded its memory limit of 1048576 bytes")
	// The server stays up and the failed query released what it held.
	mustQuery(t, cn, "SELECT count(*) FROM orders")
	if f.eng.opened.Load() != f.eng.closed.Load() {
		t.Fatalf("%d operators opened, %d closed", f.eng.opened.Load(), f.eng.closed.Load())
	}
}

func TestQueryTimeout(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{QueryTimeout: 200 * time.Millisecond}})
	cn := adbcConn(t, f.srv, nil)
	start := time.Now()
	_, err := query(context.Background(), cn, "SELECT slow", nil)
	wantADBC(t, err, adbc.StatusTimeout, "query exceeded the server's query timeout of 200ms")
	if d := time.Since(start); d > testutil.Scaled(30*time.Second) { // the timeout fired, not the test's patience
		t.Fatalf("timed out after %s", d)
	}
	mustQuery(t, cn, "SELECT count(*) FROM orders")
}

func TestMaxConcurrentStreams(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{MaxConcurrentStreams: 2, QueryTimeout: -1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	info, err := cl.Execute(ctx, "SELECT slow")
	if err != nil {
		t.Fatal(err)
	}
	// Two streams block in the slow query; the third is refused. (The raw
	// client: flightsql's DoGet waits for the schema, which a stream sends
	// with its first batch.)
	for range 2 {
		if _, err := cl.Client.DoGet(ctx, info.Endpoint[0].Ticket); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "two running streams", func() bool { return f.srv.active.Load() == 2 })
	stream, err := cl.Client.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		_, err = stream.Recv()
	}
	wantCode(t, err, codes.ResourceExhausted)
	cancel()
	waitFor(t, 5*time.Second, "streams to end", func() bool { return f.srv.active.Load() == 0 })
	c := flightClient(t, f.srv)
	tk, _ := TableTicket("orders")
	_, recs, err := readAll(context.Background(), c, tk)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(recs)
}

func TestUnsupportedCallsAnswerUnimplemented(t *testing.T) {
	f := newSQLFixture(t, Config{})
	ctx := context.Background()
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = cl.GetXdbcTypeInfo(ctx, nil)
	wantCode(t, err, codes.Unimplemented)
	_, err = cl.BeginTransaction(ctx)
	wantCode(t, err, codes.Unimplemented)
	_, err = cl.ExecuteSubstrait(ctx, flightsql.SubstraitPlan{Plan: []byte{1}})
	wantCode(t, err, codes.Unimplemented)
	c := flightClient(t, f.srv)
	dx, err := c.DoExchange(ctx)
	if err == nil {
		dx.CloseSend()
		_, err = dx.Recv()
	}
	wantCode(t, err, codes.Unimplemented)

	// GetSqlInfo leaves out ids it does not know instead of failing.
	info, err := cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName, 99999})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rdr.Read()
	if err != nil || rec.NumRows() != 1 {
		t.Fatalf("GetSqlInfo: %v %v", rec, err)
	}
	rdr.Release()

	// Primary keys: the standard (empty) result.
	info, err = cl.GetPrimaryKeys(ctx, flightsql.TableRef{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err = cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for rdr.Next() {
		n += rdr.Record().NumRows()
	}
	rdr.Release()
	if n != 0 {
		t.Fatalf("%d primary keys", n)
	}

	// Without an engine, SQL answers Unimplemented; plain Flight still works.
	s := startServer(t, Config{Sinks: f.cat})
	cl2, err := flightsql.NewClient(s.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	_, err = cl2.Execute(ctx, "SELECT 1")
	wantCode(t, err, codes.Unimplemented)
	_, err = flightClient(t, s).GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"orders"}})
	if err != nil {
		t.Fatal(err)
	}
}
