package server

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// recordEpoch returns the single _epoch of a subscription record (-1 for
// an empty record), failing when a record mixes epochs.
func recordEpoch(t *testing.T, rec arrow.Record) int64 {
	t.Helper()
	idx := rec.Schema().FieldIndices(memsink.EpochColumn)
	if len(idx) != 1 {
		t.Fatalf("record without %s: %s", memsink.EpochColumn, rec.Schema())
	}
	col := rec.Column(idx[0]).(*array.Int64)
	if col.Len() == 0 {
		return -1
	}
	e := col.Value(0)
	for i := 1; i < col.Len(); i++ {
		if col.Value(i) != e {
			t.Fatalf("record mixes epochs %d and %d", e, col.Value(i))
		}
	}
	return e
}

// TestSubscribeADBC follows a table through the ADBC Go driver: five
// epochs committed while the reader waits each arrive whole, in order,
// tagged with their epoch; then the client cancels and the server keeps
// no stream, goroutine or Arrow byte.
func TestSubscribeADBC(t *testing.T) {
	f := newSQLFixture(t, Config{})
	live := newTable(t, f.mem, f.cat, "live", epochSchema, memsink.Options{})
	commitEpochs(t, f.mem, live, 0, 2, 10) // history the subscription must not replay
	cn := adbcConn(t, f.srv, nil)
	base := goroutinesSettle(0, 200*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSqlQuery("SUBSCRIBE live"); err != nil {
		t.Fatal(err)
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rdr.Schema().Field(rdr.Schema().NumFields() - 2).Name; got != memsink.EpochColumn {
		t.Fatalf("schema %s: want the epoch columns last", rdr.Schema())
	}
	for e := int64(2); e < 7; e++ {
		// Commit only once the previous epoch has been read: each epoch
		// reaches the reader while it is waiting.
		commit(t, live, e, epochRecord(f.mem, e, int(e)*100, 7))
		rows := 0
		for rows < 7 {
			if !rdr.Next() {
				t.Fatalf("epoch %d: stream ended: %v", e, rdr.Err())
			}
			rec := rdr.Record()
			if got := recordEpoch(t, rec); got != e {
				t.Fatalf("got a record of epoch %d, want epoch %d", got, e)
			}
			if first := rec.Column(1).(*array.Int64).Value(0); rows == 0 && first != e*100 {
				t.Fatalf("epoch %d starts at i=%d, want %d", e, first, e*100)
			}
			rows += int(rec.NumRows())
		}
		if rows != 7 {
			t.Fatalf("epoch %d: %d rows, want 7", e, rows)
		}
	}
	cancel()
	rdr.Release()
	st.Close()

	waitFor(t, 10*time.Second, "the subscription to end", func() bool { return f.srv.active.Load() == 0 })
	if g := goroutinesSettle(base, 10*time.Second); g > base {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("%d goroutines, %d before the subscription:\n%s", g, base, serverStacks(string(buf[:n])))
	}
	for _, name := range f.cat.List() {
		if tab, ok := f.cat.Drop(name); ok {
			tab.Close()
		}
	}
	if n := f.mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes still allocated after the subscription ended and the tables closed", n)
	}
}

// subscribeFlight opens SUBSCRIBE text with the Flight SQL client and
// returns the reader of its DoGet.
func subscribeFlight(ctx context.Context, t *testing.T, f *sqlFixture, text string) (*flight.Reader, error) {
	t.Helper()
	cl, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	info, err := cl.Execute(ctx, text)
	if err != nil {
		return nil, err
	}
	return cl.DoGet(ctx, info.Endpoint[0].Ticket)
}

// TestSubscribeFlightSince replays retained epochs after SINCE EPOCH n,
// then follows new ones, over the plain Flight reader; an epoch without
// rows arrives as an empty record. Cancelling ends the server's stream.
func TestSubscribeFlightSince(t *testing.T) {
	f := newSQLFixture(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdr, err := subscribeFlight(ctx, t, f, "SUBSCRIBE TO orders SINCE EPOCH 2") // orders holds epochs 0..4
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if md, _ := rdr.Schema().Metadata().GetValue(EpochMetadataKey); md != "2" {
		t.Fatalf("stream metadata %s = %q, want 2", EpochMetadataKey, md)
	}
	next := func() arrow.Record {
		t.Helper()
		if !rdr.Next() {
			t.Fatalf("stream ended: %v", rdr.Err())
		}
		return rdr.Record()
	}
	for _, e := range []int64{3, 4} {
		if rec := next(); recordEpoch(t, rec) != e || rec.NumRows() != 100 {
			t.Fatalf("got %d rows of epoch %d, want 100 of epoch %d", rec.NumRows(), recordEpoch(t, rec), e)
		}
	}
	commit(t, f.orders, 5) // no rows
	if rec := next(); rec.NumRows() != 0 {
		t.Fatalf("an epoch without rows gave %d rows", rec.NumRows())
	}
	commit(t, f.orders, 6, epochRecord(f.mem, 6, 0, 3))
	if rec := next(); recordEpoch(t, rec) != 6 || rec.NumRows() != 3 {
		t.Fatalf("got %d rows of epoch %d, want 3 of epoch 6", rec.NumRows(), recordEpoch(t, rec))
	}
	cancel()
	waitFor(t, 10*time.Second, "the subscription to end", func() bool { return f.srv.active.Load() == 0 })
}

// TestSubscribeEnds: dropping the table and stopping the server end a
// subscription with an error that says why.
func TestSubscribeEnds(t *testing.T) {
	f := newSQLFixture(t, Config{})
	ctx := context.Background()
	rdr, err := subscribeFlight(ctx, t, f, "SUBSCRIBE orders SINCE EPOCH 3")
	if err != nil {
		t.Fatal(err)
	}
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	if tab, ok := f.cat.Drop("orders"); !ok || tab.Close() != nil {
		t.Fatal("drop orders")
	}
	for rdr.Next() {
	}
	wantCode(t, rdr.Err(), codes.NotFound)
	if !strings.Contains(rdr.Err().Error(), "subscription to orders: table was dropped") {
		t.Fatalf("drop ended the subscription with %v", rdr.Err())
	}
	rdr.Release()

	other := newTable(t, f.mem, f.cat, "other", epochSchema, memsink.Options{})
	commitEpochs(t, f.mem, other, 0, 1, 5)
	rdr, err = subscribeFlight(ctx, t, f, "SUBSCRIBE other SINCE EPOCH -1")
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	stopped := make(chan error, 1)
	go func() { stopped <- f.srv.Stop(context.Background()) }() // no grace deadline: the subscription must end by itself
	for rdr.Next() {
	}
	wantCode(t, rdr.Err(), codes.Unavailable)
	if !strings.Contains(rdr.Err().Error(), "the server is shutting down; resume with SINCE EPOCH") {
		t.Fatalf("stop ended the subscription with %v", rdr.Err())
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// TestSubscribeRefusals: every refusal has its code and message.
func TestSubscribeRefusals(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{MaxConcurrentQueriesPerUser: 1}})
	kept := newTable(t, f.mem, f.cat, "kept", epochSchema, memsink.Options{MaxEpochs: 2})
	commitEpochs(t, f.mem, kept, 0, 5, 1) // retains epochs 3..4
	ctx := context.Background()
	cl := sqlClient(t, f.srv)
	for _, c := range []struct {
		sql  string
		code codes.Code
		want string
	}{
		{"SUBSCRIBE missing", codes.NotFound, `table "missing" does not exist`},
		{"SUBSCRIBE system.query_progress", codes.NotFound, `only tables of schema "default" can be followed`},
		{"SUBSCRIBE kept SINCE EPOCH 0", codes.InvalidArgument, "SUBSCRIBE TO kept SINCE EPOCH 0: table kept: the epochs after 0 were evicted (retained epochs 3..4)"},
		{"SUBSCRIBE kept SINCE EPOCH -2", codes.InvalidArgument, "the epoch must be -1"},
		{"SUBSCRIBE kept WHERE x", codes.InvalidArgument, "syntax error"},
	} {
		_, err := cl.Execute(ctx, c.sql)
		wantCode(t, err, c.code)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.want)
		}
	}
	if _, err := cl.Prepare(ctx, "SUBSCRIBE kept"); err == nil || !strings.Contains(err.Error(), "SUBSCRIBE cannot be prepared") {
		t.Errorf("Prepare(SUBSCRIBE): %v", err)
	}
	// SINCE EPOCH 2 is the last evicted-free start: epoch 3 is retained.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rdr, err := subscribeFlight(sctx, t, f, "SUBSCRIBE kept SINCE EPOCH 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	// The running subscription holds the user's only statement slot.
	_, err = cl.DoGet(ctx, mustTicket(t, cl, "SUBSCRIBE kept"))
	if err == nil {
		t.Fatal("a second statement ran beside the subscription with a quota of 1")
	}
}

// mustTicket returns the ticket of a statement, reading the first message
// of nothing: the refusal comes from DoGet.
func mustTicket(t *testing.T, cl *flightsql.Client, text string) *flight.Ticket {
	t.Helper()
	info, err := cl.Execute(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	return info.Endpoint[0].Ticket
}

// TestSubscribeGrants: a user without a read grant on a table cannot
// follow it, and cannot tell it from a missing table.
func TestSubscribeGrants(t *testing.T) {
	_, ctxs, cl := grantsFixture(t)
	for _, name := range []string{"secret", "missing"} {
		_, err := cl.Execute(ctxs["alice"], "SUBSCRIBE "+name)
		wantCode(t, err, codes.NotFound)
		if want := `SUBSCRIBE: table "` + name + `" does not exist`; !strings.Contains(err.Error(), want) {
			t.Fatalf("alice subscribing to %s: %v", name, err)
		}
	}
	if _, err := cl.Execute(ctxs["alice"], "SUBSCRIBE orders"); err != nil {
		t.Fatalf("alice may read orders: %v", err)
	}
}

// TestSubscribeSlowReader: a subscriber that stops reading blocks only
// its own stream; once it has fallen behind the table's retention it is
// told so (ResourceExhausted) instead of the server keeping evicted
// epochs for it, and the table's memory is returned.
func TestSubscribeSlowReader(t *testing.T) {
	f := newSQLFixture(t, Config{})
	bigMem := poisonmem.New()
	big := newTable(t, bigMem, f.cat, "big", epochSchema, memsink.Options{MaxEpochs: 2})
	commit(t, big, 0, epochRecord(bigMem, 0, 0, 10))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdr, err := subscribeFlight(ctx, t, f, "SUBSCRIBE big SINCE EPOCH -1")
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	// 8 epochs of 6 MB while the reader reads nothing: far more than the
	// transport buffers, so the server blocks in Send on one of them.
	for e := int64(1); e <= 8; e++ {
		commit(t, big, e, epochRecord(bigMem, e, 0, 250_000))
	}
	// Other readers are not held up by the blocked subscriber.
	if _, recs, err := readAll(ctx, flightClient(t, f.srv), mustTableTicket(t, "orders")); err != nil || len(recs) == 0 {
		t.Fatalf("a plain read beside the blocked subscriber: %v", err)
	}
	var seen []int64
	for rdr.Next() {
		seen = append(seen, recordEpoch(t, rdr.Record()))
	}
	wantCode(t, rdr.Err(), codes.ResourceExhausted)
	if !strings.Contains(rdr.Err().Error(), "subscription fell behind the table's retention") {
		t.Fatalf("slow reader ended with %v", rdr.Err())
	}
	t.Logf("the slow reader saw epochs %v before it was told it fell behind", seen)
	waitFor(t, 10*time.Second, "the subscription to end", func() bool { return f.srv.active.Load() == 0 })
	if tab, ok := f.cat.Drop("big"); !ok || tab.Close() != nil {
		t.Fatal("drop big")
	}
	if n := bigMem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of the table still held after Close", n)
	}
}

func mustTableTicket(t *testing.T, name string) []byte {
	t.Helper()
	tk, err := TableTicket(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}
