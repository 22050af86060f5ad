package server

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

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

// TestGrowingValuesRefusedAsBuilt: under a 64 MiB limit, values whose size
// is known only as they are built are refused while they grow, not after:
// regexp_replace making one 500 MB value, and format_string making a
// column of 400 values of 1 MB. Each fails with RESOURCE_EXHAUSTED naming
// the function and the limit; the query's Arrow buffers never pass the
// limit (their peak is measured under the checked allocator), the Go heap
// the query allocates in all stays within a dozen times the limit (on
// main regexp_replace allocated 3 GB building the value before refusing
// it), everything is released and the next query is served.
func TestGrowingValuesRefusedAsBuilt(t *testing.T) {
	const limit = 64 << 20
	peak := &peakAllocator{Allocator: memory.NewGoAllocator()}
	srv, mem := startGovernedServerOn(t, peak, 1000, Limits{QueryMemoryBytes: limit, QueryTimeout: time.Minute})
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, c := range []struct{ fn, sql string }{
		// 1 MB of 'a', each replaced by 500 bytes: one 500 MB value.
		{"regexp_replace", "SELECT length(regexp_replace(s, 'a', repeat('b', 500))) FROM (SELECT repeat('a', 1000000 + CAST(value AS INT)) AS s FROM big WHERE value < 1)"},
		// 400 rows of '%1000000s': a 400 MB column of 1 MB values.
		{"format_string", "SELECT length(format_string('%1000000s', CAST(value AS STRING))) FROM big WHERE value < 400"},
	} {
		t.Run(c.fn, func(t *testing.T) {
			runtime.GC()
			peak.peak.Store(peak.cur.Load())
			arrowBase := peak.cur.Load()
			heapBefore := totalHeapAlloc()
			err := runFlightSQL(ctx, cl, c.sql)
			took := totalHeapAlloc() - heapBefore
			st, _ := status.FromError(err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 67108864 bytes") ||
				!strings.Contains(st.Message(), c.fn+": ") {
				t.Fatalf("got %v, want ResourceExhausted naming %s and the 64 MiB limit", err, c.fn)
			}
			if grew := peak.peak.Load() - arrowBase; grew > limit+(4<<20) {
				t.Errorf("the query's Arrow buffers peaked %d bytes over where they were, past the %d-byte limit", grew, limit)
			}
			// Growing by at most a sixteenth of the limit past its need,
			// a buffer is copied at most ~16 times on its way to the
			// limit: its allocations sum to about 8.5 times the limit.
			if took > 12*limit {
				t.Errorf("the query took %d bytes of Go heap under a %d-byte limit: the value was built before it was refused", took, limit)
			}
			t.Logf("%s: Arrow peak +%d bytes, Go heap allocated %d bytes", c.fn, peak.peak.Load()-arrowBase, took)
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
			if err := runFlightSQL(ctx, cl, "SELECT count(*) FROM big"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// totalHeapAlloc is the bytes the Go heap has handed out so far.
func totalHeapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
