package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCancelLongJoinAndSort is issue 17 end to end: a hash join whose
// build side is 4M rows and a sort of 4M rows, run with the real Flight
// SQL client, are stopped by the client's cancel while their large
// buffers are being made, and by the server's query timeout; each time the
// query ends, the allocator returns to its bytes before the query and the
// server serves the next query. The deadlines are bounds for a hang; the
// measured times are logged, not asserted.
func TestCancelLongJoinAndSort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 4M-row tables")
	}
	const rows = 4 << 20
	queries := []struct{ name, sql string }{
		{"join", "SELECT count(*) FROM big a JOIN big b ON a.value = b.value"},
		{"sort", "SELECT value FROM big ORDER BY value DESC"},
	}
	for _, q := range queries {
		t.Run(q.name+"/client cancel", func(t *testing.T) {
			srv, mem := startGovernedServer(t, rows, Limits{QueryTimeout: -1})
			base := mem.CurrentAlloc()
			cl := sqlClient(t, srv)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- runFlightSQL(ctx, cl, q.sql) }()
			// Cancel once the query holds a good part of its input copy
			// (the concatenation of the build side or the sort's input):
			// it is then making or filling its large buffers.
			waitFor(t, time.Minute, "the query to hold its input", func() bool {
				return mem.CurrentAlloc()-base >= 8*rows/2
			})
			start := time.Now()
			cancel()
			if err := <-done; status.Code(err) != codes.Canceled {
				t.Fatalf("client saw %v, want Canceled", err)
			}
			waitFor(t, time.Minute, "the server to stop the query", func() bool { return srv.active.Load() == 0 })
			stopped := time.Since(start)
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
			t.Logf("%s: cancel to query end %v, to memory back at %d bytes %v", q.name, stopped, base, time.Since(start))
			if err := runFlightSQL(context.Background(), cl, "SELECT count(*) FROM big"); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(q.name+"/timeout", func(t *testing.T) {
			// 4M rows are not joined or sorted in 100 ms on any machine
			// this runs on; the timeout lands while the buffers are made.
			srv, mem := startGovernedServer(t, rows, Limits{QueryTimeout: 100 * time.Millisecond})
			base := mem.CurrentAlloc()
			cl := sqlClient(t, srv)
			start := time.Now()
			err := runFlightSQL(context.Background(), cl, q.sql)
			if st, _ := status.FromError(err); st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "query timeout") {
				t.Fatalf("got %v, want DeadlineExceeded naming the query timeout", err)
			}
			ended := time.Since(start)
			waitFor(t, time.Minute, "the server to stop the query", func() bool { return srv.active.Load() == 0 })
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
			t.Logf("%s: start to timeout error %v (timeout 100ms), to memory back at %d bytes %v", q.name, ended, base, time.Since(start))
			if err := runFlightSQL(context.Background(), cl, "SELECT count(*) FROM big"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
