package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestHugeValueRefusedBeforeBuilt: under a 64 MiB limit, one value of a
// row kernel whose size depends on its input (replace growing each match,
// translate to a wider character) far past the limit is refused before it
// is built (the refusal names the value's size, known only from the bound),
// with RESOURCE_EXHAUSTED naming the function and the limit;
// everything is released (the checked allocator is back where it was, at
// zero at cleanup) and the server serves the next query.
func TestHugeValueRefusedBeforeBuilt(t *testing.T) {
	const limit = 64 << 20
	srv, mem := startGovernedServer(t, 10, Limits{QueryMemoryBytes: limit, QueryTimeout: time.Minute})
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, c := range []struct{ fn, sql, size string }{
		// 1 MB of 'a', each replaced by 200 bytes: a 200 MB value.
		{"replace", "SELECT length(replace(s, 'a', repeat('b', 200))) FROM (SELECT repeat('a', 1000000 + CAST(value AS INT)) AS s FROM big WHERE value < 1)", "200000000"},
		// 30 MB of 'a', each made a 3-byte '€': a 90 MB value.
		{"translate", "SELECT length(translate(s, 'a', '€')) FROM (SELECT repeat('a', 30000000 + CAST(value AS INT)) AS s FROM big WHERE value < 1)", "90000000"},
	} {
		t.Run(c.fn, func(t *testing.T) {
			err := runFlightSQL(ctx, cl, c.sql)
			st, _ := status.FromError(err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 67108864 bytes") ||
				!strings.Contains(st.Message(), c.fn+": ") {
				t.Fatalf("got %v, want ResourceExhausted naming %s and the 64 MiB limit", err, c.fn)
			}
			// The value's size known before it was built (not a scratch
			// buffer's capacity after building it).
			if !strings.Contains(st.Message(), "a value of "+c.size+" bytes is refused") {
				t.Fatalf("got %q, want the refusal of the %s-byte value before it is built", st.Message(), c.size)
			}
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
			if err := runFlightSQL(ctx, cl, "SELECT count(*) FROM big"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
