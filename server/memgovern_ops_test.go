package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// governedOps are the operators of issue 17's second round, each as a
// query over big (bigint value 0..n-1) that buffers much more than 16 MiB
// or produces that much per batch: window functions over one partition,
// a sort of strings, EXCEPT/INTERSECT (ALL and DISTINCT), from_json over
// a column of large documents, and explode of large arrays. ops are the
// operators a limit error may name (the sort's input is a projection's
// output: whichever of the two allocates the byte over the limit is named).
var governedOps = []struct {
	name string
	ops  []string
	sql  string
}{
	{"window_one_partition", []string{"Window"},
		"SELECT max(s), max(r) FROM (SELECT sum(value) OVER (ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s, " +
			"row_number() OVER (ORDER BY value) AS r FROM big)"},
	{"sort_strings", []string{"Sort", "Project"},
		"SELECT s FROM (SELECT concat('k', CAST(value * 7919 % 1000003 AS STRING), 'padding-padding') AS s FROM big) ORDER BY s"},
	{"except_distinct", []string{"HashJoin"}, "SELECT count(*) FROM (SELECT value FROM big EXCEPT SELECT value + 1 FROM big)"},
	{"intersect_distinct", []string{"HashJoin"}, "SELECT count(*) FROM (SELECT value FROM big INTERSECT SELECT value + 1 FROM big)"},
	{"except_all", []string{"HashAggregate"}, "SELECT count(*) FROM (SELECT value FROM big EXCEPT ALL SELECT value + 1 FROM big)"},
	{"intersect_all", []string{"HashAggregate"}, "SELECT count(*) FROM (SELECT value FROM big INTERSECT ALL SELECT value + 1 FROM big)"},
	{"from_json", []string{"Project"},
		"SELECT count(j) FROM (SELECT from_json(concat('{\"a\":[', repeat(CAST(value AS STRING) || ',', 24), '0]}'), 'a ARRAY<BIGINT>') AS j FROM big)"},
	{"explode", []string{"Explode", "Project"}, "SELECT count(*) FROM (SELECT explode(sequence(value, value + 39)) AS e FROM big)"},
}

// arrayCancelOps are queries whose time goes into the array kernels made
// interruptible (they check the context every 64K elements or so): the
// higher-order functions, sort_array/array_sort, array_contains,
// array_position, array_remove, array_min/max, array_join, arrays_zip,
// flatten, array_distinct, each over 200-element arrays of every row of
// big; and single arrays of 20M elements (sort_array, explode) in one
// row, where a kernel's one call over the array is the whole query.
var arrayCancelOps = []struct {
	name string
	sql  string
}{
	{"transform", "SELECT sum(size(transform(sequence(1, 200), x -> x * value))) FROM big"},
	{"filter", "SELECT sum(size(filter(sequence(1, 200), x -> x % 3 = value % 3))) FROM big"},
	{"aggregate", "SELECT sum(aggregate(sequence(1, 200), CAST(0 AS BIGINT), (acc, x) -> acc + x * value)) FROM big"},
	{"sort_array", "SELECT sum(element_at(sort_array(sequence(value + 200, value, -1)), 1)) FROM big"},
	{"array_sort", "SELECT sum(element_at(array_sort(sequence(value + 200, value, -1)), 1)) FROM big"},
	{"array_contains", "SELECT count_if(array_contains(sequence(1, 200), value % 400)) FROM big"},
	{"array_position", "SELECT sum(array_position(sequence(1, 200), value % 400)) FROM big"},
	{"array_remove", "SELECT sum(size(array_remove(sequence(1, 200), value % 400))) FROM big"},
	{"array_min_max", "SELECT sum(array_min(sequence(value, value + 200)) + array_max(sequence(value, value + 200))) FROM big"},
	{"array_join", "SELECT sum(length(array_join(transform(sequence(1, 100), x -> CAST(x + value AS STRING)), ','))) FROM big"},
	{"arrays_zip", "SELECT sum(size(arrays_zip(sequence(1, 200), sequence(value, value + 199)))) FROM big"},
	{"flatten", "SELECT sum(size(flatten(array(sequence(1, 100), sequence(value, value + 99))))) FROM big"},
	{"array_distinct", "SELECT sum(size(array_distinct(transform(sequence(1, 200), x -> (x * value) % 50)))) FROM big"},
	{"sort_array_huge", "SELECT element_at(sort_array(sequence(20000000, 1, -1)), 1) FROM big WHERE value = 7"},
	{"explode_huge", "SELECT count(*) FROM (SELECT explode(sequence(1, 20000000)) AS e FROM big WHERE value = 7)"},
}

// TestOperatorsMemoryLimit: under a 16 MiB per-query limit each of
// governedOps fails with RESOURCE_EXHAUSTED naming the limit and the
// operator, everything it allocated is released (the checked allocator
// back where it was) and the server serves the next query.
func TestOperatorsMemoryLimit(t *testing.T) {
	const limit = 16 << 20
	srv, mem := startGovernedServer(t, 2_000_000, Limits{QueryMemoryBytes: limit, QueryTimeout: 5 * time.Minute})
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, c := range governedOps {
		t.Run(c.name, func(t *testing.T) {
			err := runFlightSQL(ctx, cl, c.sql)
			st, _ := status.FromError(err)
			named := slices.ContainsFunc(c.ops, func(op string) bool { return strings.Contains(st.Message(), " in "+op) })
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 16777216 bytes") || !named {
				t.Fatalf("got %v, want ResourceExhausted naming the 16 MiB limit and one of %v", err, c.ops)
			}
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
		})
	}
	if err := runFlightSQL(ctx, cl, "SELECT count(*) FROM big"); err != nil {
		t.Fatal(err)
	}
}

// TestOperatorsCancel: each of governedOps and arrayCancelOps, cancelled
// by its client once it runs and holds memory, ends with Canceled; the
// server stops it, releases everything it allocated (the checked
// allocator back where it was) and serves the next query. How long the
// stop takes is logged; it is measured by vector's BenchmarkCancelLatency
// (and the array kernels' StopWhenCancelled tests), not asserted here.
func TestOperatorsCancel(t *testing.T) {
	srv, mem := startGovernedServer(t, 2_000_000, Limits{QueryTimeout: -1})
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	type cancelCase struct{ name, sql string }
	var cases []cancelCase
	for _, c := range governedOps {
		cases = append(cases, cancelCase{c.name, c.sql})
	}
	for _, c := range arrayCancelOps {
		cases = append(cases, cancelCase{c.name, c.sql})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A quick query (except_all over 2M rows) can finish between
			// two polls when the test's goroutine waits for a CPU on a
			// loaded machine: such a run proves nothing either way, so
			// it is tried again (a failure to stop is still caught).
			var cancel context.CancelFunc
			var done chan error
			for attempt := 1; ; attempt++ {
				var ctx context.Context
				ctx, cancel = context.WithCancel(context.Background())
				defer cancel()
				done = make(chan error, 1)
				go func() { done <- runFlightSQL(ctx, cl, c.sql) }()
				var ended error
				finished := false
				waitFor(t, time.Minute, "the query to run and hold memory", func() bool {
					select {
					case ended = <-done:
						finished = true
						return true
					default:
					}
					return srv.active.Load() > 0 && mem.CurrentAlloc() > base+(1<<20)
				})
				if !finished {
					break
				}
				if ended != nil || attempt == 10 {
					t.Fatalf("the query ended before it was cancelled (attempt %d): %v", attempt, ended)
				}
				t.Logf("attempt %d: the query finished before the test saw it holding memory; again", attempt)
				waitFor(t, time.Minute, "the server to finish the query", func() bool { return srv.active.Load() == 0 })
			}
			cancelled := time.Now()
			cancel()
			if err := <-done; status.Code(err) != codes.Canceled {
				t.Fatalf("client saw %v, want Canceled", err)
			}
			waitFor(t, time.Minute, "the server to stop the query", func() bool { return srv.active.Load() == 0 })
			stopped := time.Since(cancelled)
			waitFor(t, time.Minute, "the query's memory to be released", func() bool { return mem.CurrentAlloc() == base })
			t.Logf("stopped %v after the cancel, memory released %v after it", stopped.Round(time.Millisecond), time.Since(cancelled).Round(time.Millisecond))
		})
	}
	if err := runFlightSQL(context.Background(), cl, "SELECT count(*) FROM big"); err != nil {
		t.Fatal(err)
	}
}
