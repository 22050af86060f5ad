package server

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// TestAbandonedStreamsLeaveNothing starts 100 reads of a table too large
// to buffer (plain DoGets and Flight SQL queries, alternately), reads one
// batch of each and walks away (cancelling, or closing the connection).
// Afterwards no server goroutine is left, every operator is closed, and
// closing the table frees every byte: no snapshot is still held.
func TestAbandonedStreamsLeaveNothing(t *testing.T) {
	f := newSQLFixture(t, Config{})
	bigMem := poisonmem.New()
	big := newTable(t, bigMem, f.cat, "big", epochSchema, memsink.Options{})
	for e := range 4 { // 1M rows, 24 MB: far more than the transport buffers
		commit(t, big, int64(e), epochRecord(bigMem, int64(e), e*250_000, 250_000))
	}
	ctx := context.Background()
	c := flightClient(t, f.srv)
	sqlc, err := flightsql.NewClient(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer sqlc.Close()
	plain, _ := TableTicket("big")

	// One complete read of each kind warms up the connections.
	open := func(ctx context.Context, c flight.Client, i int) (*flight.Reader, error) {
		ticket := plain
		if i%2 == 1 {
			info, err := sqlc.Execute(ctx, "SELECT * FROM big")
			if err != nil {
				return nil, err
			}
			ticket = info.Endpoint[0].Ticket.Ticket
		}
		stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
		if err != nil {
			return nil, err
		}
		return flight.NewRecordReader(stream)
	}
	for i := range 2 {
		rdr, err := open(ctx, c, i)
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
		}
		rdr.Release()
	}
	waitFor(t, 5*time.Second, "warm-up streams to end", func() bool { return f.srv.active.Load() == 0 })
	base := goroutinesSettle(0, 200*time.Millisecond)
	opened := f.eng.opened.Load()

	for i := range 100 {
		cctx, cancel := context.WithCancel(ctx)
		client := c
		if i%10 == 9 {
			// Some clients go away by closing their connection.
			client = flightClient(t, f.srv)
		}
		rdr, err := open(cctx, client, i)
		if err != nil {
			t.Fatal(err)
		}
		if !rdr.Next() {
			t.Fatalf("read %d: no first batch: %v", i, rdr.Err())
		}
		if client != c {
			client.Close()
		}
		cancel()
		rdr.Release()
	}

	waitFor(t, 10*time.Second, "abandoned streams to end", func() bool { return f.srv.active.Load() == 0 })
	if o, c := f.eng.opened.Load()-opened, f.eng.closed.Load(); o != 50 || c != f.eng.opened.Load() {
		t.Fatalf("engine operators: %d opened by the abandoned queries, %d of %d closed", o, c, f.eng.opened.Load())
	}
	if g := goroutinesSettle(base, 10*time.Second); g > base {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("%d goroutines, %d before the abandoned reads:\n%s", g, base, serverStacks(string(buf[:n])))
	}
	if tab, ok := f.cat.Drop("big"); !ok || tab.Close() != nil {
		t.Fatal("drop big")
	}
	if n := bigMem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes of the table still held after Close: a snapshot leaked", n)
	}
}

// serverStacks keeps the goroutine stacks that mention this package.
func serverStacks(all string) string {
	var out []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "arrowstream/server") {
			out = append(out, g)
		}
	}
	return fmt.Sprintf("%d server goroutines:\n%s", len(out), strings.Join(out, "\n\n"))
}
