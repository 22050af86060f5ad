package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// staticTable is a batch table of records (retained) for the planner.
type staticTable struct {
	schema *arrow.Schema
	recs   []arrow.Record
}

func (s *staticTable) Schema() *arrow.Schema { return s.schema }
func (s *staticTable) Streaming() bool       { return false }
func (s *staticTable) Scan(context.Context, memory.Allocator) (vector.Operator, error) {
	return vector.NewScan(s.schema, s.recs...)
}

// bigTable holds rows 0..n-1 in a bigint column "value", in 64K-row
// records, on mem.
func bigTable(t *testing.T, mem memory.Allocator, n int) *staticTable {
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tb := &staticTable{schema: schema}
	for lo := 0; lo < n; lo += 64 << 10 {
		b := array.NewInt64Builder(mem)
		for v := lo; v < min(lo+64<<10, n); v++ {
			b.Append(int64(v))
		}
		col := b.NewArray()
		b.Release()
		tb.recs = append(tb.recs, array.NewRecord(schema, []arrow.Array{col}, int64(col.Len())))
		col.Release()
	}
	t.Cleanup(func() {
		for _, r := range tb.recs {
			r.Release()
		}
	})
	return tb
}

// startGovernedServer serves a session with a static table big of n rows
// under limits, on a checked allocator that must be back at zero at the
// end (checked after every other cleanup).
func startGovernedServer(t *testing.T, n int, limits Limits) (*Server, *memory.CheckedAllocator) {
	t.Helper()
	return startGovernedServerOn(t, memory.NewGoAllocator(), n, limits)
}

// startGovernedServerOn is startGovernedServer with the checked allocator
// over under, and extra catalogs.
func startGovernedServerOn(t *testing.T, under memory.Allocator, n int, limits Limits, extra ...plan.Catalog) (*Server, *memory.CheckedAllocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(under)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	static := plan.NewMemoryCatalog()
	static.Register("big", bigTable(t, mem, n))
	sess.AddCatalog(static)
	for _, c := range extra {
		sess.AddCatalog(c)
	}
	t.Cleanup(func() { sess.Streams().StopAll() })
	cfg := ForSession(sess, cat)
	cfg.Limits = limits
	return startServer(t, cfg), mem
}

// runFlightSQL runs a query with the Flight SQL client and drains it,
// returning the error (a gRPC status).
func runFlightSQL(ctx context.Context, cl *flightsql.Client, sql string) error {
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return err
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return err
	}
	defer rdr.Release()
	for rdr.Next() {
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// TestCrossJoinMemoryLimit is issue 17's attack: a cross join of 600K
// rows with itself grouped by a key with 360 billion values, under a 64
// MiB limit. It must fail with RESOURCE_EXHAUSTED naming the limit and the
// operator, release everything (the checked allocator ends at zero) and
// leave the server serving.
func TestCrossJoinMemoryLimit(t *testing.T) {
	const limit = 64 << 20
	srv, mem := startGovernedServer(t, 600_000, Limits{QueryMemoryBytes: limit, QueryTimeout: time.Minute})
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT a.value*1000000+b.value AS k, count(*) FROM big a CROSS JOIN big b GROUP BY 1 ORDER BY 2 DESC LIMIT 3",
		"SELECT a.value*1000000+b.value AS k, count(*) FROM big a JOIN big b ON a.value % 3 = b.value % 3 GROUP BY 1 ORDER BY 2 DESC LIMIT 3",
	} {
		start := time.Now()
		err := runFlightSQL(ctx, cl, q)
		took := time.Since(start)
		st, _ := status.FromError(err)
		if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "RESOURCE_EXHAUSTED") ||
			!strings.Contains(st.Message(), "memory limit of 67108864 bytes") || !strings.Contains(st.Message(), "HashAggregate") {
			t.Fatalf("%s: got %v, want ResourceExhausted naming the 64 MiB limit and HashAggregate", q, err)
		}
		t.Logf("%s: failed after %s: %s", q[:40], took, st.Message())
		// Everything the query allocated is released once the stream ends.
		waitFor(t, 10*time.Second, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
	}
	// The server still serves.
	if err := runFlightSQL(ctx, cl, "SELECT count(*) FROM big"); err != nil {
		t.Fatal(err)
	}
}

// TestServerMemoryLimitRefusesNewWork: with the process-wide limit below
// what the process already holds, new queries are refused with
// ResourceExhausted and a message naming the limit.
func TestServerMemoryLimitRefusesNewWork(t *testing.T) {
	srv, _ := startGovernedServer(t, 1000, Limits{ServerMemoryBytes: 1})
	err := runFlightSQL(context.Background(), sqlClient(t, srv), "SELECT count(*) FROM big")
	st, _ := status.FromError(err)
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 1 bytes") {
		t.Fatalf("got %v, want ResourceExhausted naming the server's limit", err)
	}
}

// TestQueryAllocatorLimits checks the accounting against a brute-force
// model: every Allocate, Reallocate, Free and Reserve moves inUse by its
// size; the first step over the limit cancels the query with a
// MemoryLimitError; a Reserve over the limit is refused and reserves
// nothing; only an allocation past twice the limit panics.
func TestQueryAllocatorLimits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	a := newQueryAllocator(mem, 1000)
	var cause error
	a.cancel = func(err error) { cause = err }
	op := a.ForOperator("HashJoin")
	b := op.Allocate(600)
	if err := op.(vector.MemoryReserver).Reserve(300); err != nil {
		t.Fatal(err)
	}
	if err := op.(vector.MemoryReserver).Reserve(200); err == nil || !strings.Contains(err.Error(), "HashJoin") {
		t.Fatalf("Reserve over the limit: %v", err)
	}
	if a.inUse.Load() != 900 {
		t.Fatalf("a refused Reserve changed inUse to %d", a.inUse.Load())
	}
	var mle *MemoryLimitError
	if !errors.As(cause, &mle) || mle.Operator != "HashJoin" || mle.Limit != 1000 {
		t.Fatalf("cause %v, want the MemoryLimitError of HashJoin", cause)
	}
	b = op.Reallocate(1500, b) // over the limit, under twice: granted
	if a.inUse.Load() != 1800 {
		t.Fatalf("inUse %d after Reallocate", a.inUse.Load())
	}
	func() {
		defer func() {
			if _, ok := recover().(*MemoryLimitError); !ok {
				t.Fatal("no MemoryLimitError panic past twice the limit")
			}
		}()
		op.Allocate(1000)
	}()
	if err := a.Reserve(-300); err != nil {
		t.Fatal(err)
	}
	op.Free(b)
	if a.inUse.Load() != 0 || a.peak.Load() != 1800 {
		t.Fatalf("inUse %d peak %d at the end", a.inUse.Load(), a.peak.Load())
	}
}

// TestCancelReachesOperators: a cross join of 600K rows with itself
// (360 billion rows to count) is stopped by the server's query timeout
// and by the client's cancel; each time the operators are closed, the
// memory is released and the server serves the next query.
func TestCancelReachesOperators(t *testing.T) {
	const q = "SELECT count(*) FROM big a CROSS JOIN big b"
	t.Run("timeout", func(t *testing.T) {
		srv, mem := startGovernedServer(t, 600_000, Limits{QueryTimeout: time.Second})
		base := mem.CurrentAlloc()
		cl := sqlClient(t, srv)
		err := runFlightSQL(context.Background(), cl, q)
		if st, _ := status.FromError(err); st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "query timeout of 1s") {
			t.Fatalf("got %v, want DeadlineExceeded naming the query timeout", err)
		}
		waitFor(t, 30*time.Second, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
		if err := runFlightSQL(context.Background(), cl, "SELECT count(*) FROM big"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("client cancel", func(t *testing.T) {
		srv, mem := startGovernedServer(t, 600_000, Limits{QueryTimeout: -1})
		base := mem.CurrentAlloc()
		cl := sqlClient(t, srv)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- runFlightSQL(ctx, cl, q) }()
		// The count sends nothing before its end: cancel while it runs.
		waitFor(t, 30*time.Second, "the query to run", func() bool { return srv.active.Load() > 0 })
		cancel()
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("client saw %v, want Canceled", err)
		}
		waitFor(t, 30*time.Second, "the server to stop the query", func() bool { return srv.active.Load() == 0 })
		waitFor(t, 30*time.Second, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
		if err := runFlightSQL(context.Background(), cl, "SELECT count(*) FROM big"); err != nil {
			t.Fatal(err)
		}
	})
}
