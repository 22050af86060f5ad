package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/vector"
)

// pastTwiceLimit are queries over big (bigint value 0..n-1) in which one
// Arrow allocation would take the query past twice a 16 MiB limit, so
// that the query's allocator panics inside the named operator's kernel:
// a string kernel's output (concat, repeat, lpad, rpad: evaluated inside
// the aggregation over them), sequence's list, explode's expansion of a
// constant array, and the gathers of a sort, a hash join and a grouped
// aggregation whose five output columns share one input array (one
// column in, five copies out).
//
// refused: the kernel knows its output's size and refuses it before
// allocating (vector/expr_value_size.go), naming itself: no panic, no
// reclaim, the same clean end. refusedBy is what the refusal names when
// it is not the case's name: the grouped aggregation's first() values
// count their string bytes on the aggregation's account since session 13,
// so the ~40 MB of kept strings are refused before the output gather.
var pastTwiceLimit = []struct {
	name, op, sql string
	refused       bool
	refusedBy     string
}{
	{"concat", "HashAggregate", "SELECT max(length(concat(s, s, s, s, s, s))) FROM (SELECT repeat('x', 100 + CAST(value % 2 AS INT)) AS s FROM big)", true, ""},
	{"repeat", "HashAggregate", "SELECT max(length(repeat('abcdefgh', 5000000 + CAST(value AS INT)))) FROM big WHERE value < 2", true, ""},
	{"lpad", "HashAggregate", "SELECT max(length(lpad(CAST(value AS STRING), 600, 'x'))) FROM big", true, ""},
	{"rpad", "HashAggregate", "SELECT max(length(rpad(CAST(value AS STRING), 600, 'x'))) FROM big", true, ""},
	{"sequence", "Project", "SELECT count(*) FROM (SELECT sequence(1, 100 + value % 2) AS s FROM big)", false, ""},
	{"explode", "Explode", "SELECT count(*) FROM (SELECT explode(array(repeat('x', 1000), 'y')) AS e FROM big)", false, ""},
	{"sort_strings", "Sort", "SELECT s, s2, s3, s4, s5 FROM (" + fiveCopies("s", "") + ") ORDER BY s", false, ""},
	{"hash_join", "HashJoin", "SELECT count(*) FROM (SELECT b.* FROM big a JOIN (" + fiveCopies("value, s", "value, ") + ") b ON a.value = b.value)", false, ""},
	{"grouped_aggregate", "HashAggregate", "SELECT k, first(s), first(s2), first(s3), first(s4), first(s5) FROM (" + fiveCopies("k, s", "value AS k, ") + ") GROUP BY k", true, "hash aggregation: "},
}

// fiveCopies selects cols and four more copies of s (one array, five
// columns), where s is two strings of about 4 MB.
func fiveCopies(cols, inner string) string {
	return "SELECT " + cols + ", s AS s2, s AS s3, s AS s4, s AS s5 FROM (SELECT " + inner +
		"repeat('ab', 2000000 + CAST(value AS INT)) AS s FROM big WHERE value < 2)"
}

// TestPastTwiceLimitReclaimed: each of pastTwiceLimit, run over Flight SQL
// under a 16 MiB limit on a checked allocator over a MappedAllocator,
// panics past twice the limit in its operator (the server counts the
// reclaimed query) and fails with RESOURCE_EXHAUSTED naming the limit
// and the operator; then what the unwound kernel held is freed: the
// checked allocator is back where it was (at zero once the table is
// released, checked at cleanup: no table batch stays retained either),
// nothing stays mapped, the query's and the server's accounts are back at
// zero, and the server serves the next query.
func TestPastTwiceLimitReclaimed(t *testing.T) {
	const limit = 16 << 20
	mapped := vector.NewMappedAllocator()
	srv, mem := startGovernedServerOn(t, mapped, 2_000_000, Limits{QueryMemoryBytes: limit, QueryTimeout: 5 * time.Minute})
	base, baseMapped := mem.CurrentAlloc(), mapped.MappedBytes()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, c := range pastTwiceLimit {
		t.Run(c.name, func(t *testing.T) {
			before := srv.pool.reclaimed.Load()
			err := runFlightSQL(ctx, cl, c.sql)
			st, _ := status.FromError(err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 16777216 bytes") ||
				!strings.Contains(st.Message(), " in "+c.op) {
				t.Fatalf("got %v, want ResourceExhausted naming the 16 MiB limit and %s", err, c.op)
			}
			waitFor(t, time.Minute, "the query to end", func() bool { return srv.active.Load() == 0 })
			if c.refused {
				by := c.refusedBy
				if by == "" {
					by = c.name + ": "
				}
				if n := srv.pool.reclaimed.Load() - before; n != 0 || !strings.Contains(st.Message(), by) {
					t.Fatalf("%d queries reclaimed (want 0: refused before allocating), message %s (want it to name %q)", n, st.Message(), by)
				}
			} else if n := srv.pool.reclaimed.Load() - before; n != 1 {
				t.Fatalf("%d queries reclaimed, want 1: the allocation past twice the limit did not panic (%s)", n, st.Message())
			}
			if got := mem.CurrentAlloc(); got != base {
				t.Errorf("checked allocator holds %d bytes, %d before the query", got, base)
			}
			if got := mapped.MappedBytes(); got != baseMapped {
				t.Errorf("%d bytes mapped, %d before the query", got, baseMapped)
			}
			if got := srv.pool.inUse.Load(); got != 0 {
				t.Errorf("the server's pool counts %d bytes of queries, want 0", got)
			}
			if err := runFlightSQL(ctx, cl, "SELECT count(*) FROM big"); err != nil {
				t.Fatalf("the next query: %v", err)
			}
		})
	}
}
