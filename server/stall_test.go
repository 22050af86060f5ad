package server

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/memsink"
)

// TestStalledReaderCancelled opens a DoGet of a table far larger than the
// transport buffers, reads one message and stops reading. The stall
// timeout ends the stream: its snapshot is released (closing the table
// frees every byte) and the client's next read fails, while a reader that
// keeps reading on another connection is not disturbed.
func TestStalledReaderCancelled(t *testing.T) {
	f := newSQLFixture(t, Config{Limits: Limits{StallTimeout: 5 * time.Second}})
	bigMem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	big := newTable(t, bigMem, f.cat, "big", epochSchema, memsink.Options{})
	for e := range 4 { // 1M rows, 24 MB
		commit(t, big, int64(e), epochRecord(bigMem, int64(e), e*250_000, 250_000))
	}
	ticket, _ := TableTicket("big")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	stalled := flightClient(t, f.srv)
	stream, err := stalled.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("first message: %v", err)
	}
	// A healthy reader meanwhile reads everything.
	_, recs, err := readAll(ctx, flightClient(t, f.srv), ticket)
	if err != nil {
		t.Fatalf("a reading client was disturbed: %v", err)
	}
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
		r.Release()
	}
	if rows != 1_000_000 {
		t.Fatalf("healthy reader got %d rows", rows)
	}
	waitFor(t, time.Minute, "the stalled stream to be cancelled", func() bool { return f.srv.active.Load() == 0 })
	// The client's stream is dead: reading on ends in an error, not the
	// rest of the table.
	for {
		if _, err = stream.Recv(); err != nil {
			break
		}
	}
	if tab, ok := f.cat.Drop("big"); !ok || tab.Close() != nil {
		t.Fatal("drop big")
	}
	if n := bigMem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes still allocated: the stalled stream kept its snapshot", n)
	}
}
