package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/plan"
)

// heldTableOps are queries over wide (k bigint 0 and 1; s, s2..s5: one
// string array of two ~4 MB values, five columns) in which the named
// batch operator holds the table's batch (or one made from it) while an
// allocation past twice a 16 MiB limit panics: the five string columns
// gathered, copied or expanded at once make about 40 MB.
//
// Those marked refused instead have their hash table's reservation
// refused (a key of ~20 MB): the limit is met as an error, not a panic,
// and the table's batch must be released all the same.
var heldTableOps = []struct {
	name, sql string
	refused   bool
}{
	{"sort", "SELECT * FROM wide ORDER BY k DESC", false},
	{"top_n", "SELECT * FROM wide ORDER BY k DESC LIMIT 2", false},
	{"window", "SELECT *, row_number() OVER (ORDER BY k) AS r FROM wide", false},
	{"window_partition", "SELECT *, count(*) OVER (PARTITION BY k) AS c FROM wide", false},
	{"limit", "SELECT * FROM (SELECT * FROM wide LIMIT 2) ORDER BY k DESC", false},
	{"union_all", "SELECT * FROM (SELECT * FROM wide UNION ALL SELECT * FROM wide) ORDER BY k", false},
	{"union_distinct", "SELECT * FROM wide UNION SELECT * FROM wide", true},
	{"distinct", "SELECT DISTINCT * FROM wide", true},
	{"except_all", "SELECT * FROM wide EXCEPT ALL SELECT * FROM wide WHERE k > 5", true},
	{"intersect", "SELECT * FROM wide INTERSECT SELECT * FROM wide", true},
	{"lateral_view", "SELECT k, e FROM wide LATERAL VIEW explode(array(s, s2, s3, s4, s5, s)) t AS e", false},
	{"posexplode", "SELECT posexplode(array(s, s2, s3, s4, s5, s)) FROM wide", false},
	// The semi and anti joins hold their probe batch (the table's) while
	// the projection above builds arrays of the five strings, which
	// passes twice the limit. (concat, used here before, now knows its
	// result's size and refuses it before allocating: no panic.)
	{"semi_join", "SELECT k, array(s, s2, s3, s4, s5, s) FROM wide WHERE k IN (SELECT k FROM wide)", false},
	{"anti_join", "SELECT k, array(s, s2, s3, s4, s5, s) FROM wide a WHERE NOT EXISTS (SELECT 1 FROM wide b WHERE b.k = a.k + 10)", false},
	// concat refuses before allocating: the limit is met as an error.
	{"semi_join_concat", "SELECT k, concat(s, s2, s3, s4, s5) FROM wide WHERE k IN (SELECT k FROM wide)", true},
	// first() counts its kept strings' bytes on the aggregation's account
	// (since session 13): refused before the output gather, no panic.
	{"grouped_first", "SELECT k, first(s), first(s2), first(s3), first(s4), first(s5) FROM wide GROUP BY k", true},
	{"scalar_subquery", "SELECT *, (SELECT max(k) FROM wide) AS m FROM wide ORDER BY k", false},
	{"grouping_sets", "SELECT k, s, s2, s3, s4, count(*) FROM wide GROUP BY GROUPING SETS ((k, s, s2, s3, s4), (k, s, s2), (s, s3, s4))", true},
	{"cross_join", "SELECT * FROM wide a CROSS JOIN wide b", false},
	{"hash_join", "SELECT * FROM wide a JOIN wide b ON a.k = b.k", false},
	{"concat", "SELECT concat(s, s2, s3, s4, s5, s) FROM wide", true},
}

// wideTable is heldTableOps' table, on mem.
func wideTable(t *testing.T, mem memory.Allocator) *plan.MemTable {
	t.Helper()
	fields := []arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	for _, n := range []string{"s", "s2", "s3", "s4", "s5"} {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.BinaryTypes.String})
	}
	schema := arrow.NewSchema(fields, nil)
	kb := array.NewInt64Builder(mem)
	kb.AppendValues([]int64{0, 1}, nil)
	k := kb.NewArray()
	kb.Release()
	sb := array.NewStringBuilder(mem)
	sb.Append(strings.Repeat("ab", 2_000_000))
	sb.Append(strings.Repeat("ab", 2_000_001))
	s := sb.NewArray()
	sb.Release()
	rec := array.NewRecord(schema, []arrow.Array{k, s, s, s, s, s}, 2)
	k.Release()
	s.Release()
	defer rec.Release()
	tb, err := plan.NewMemTable(schema, rec)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestPastTwiceLimitTableBatchesReleased: each of heldTableOps, run over
// Flight SQL under a 16 MiB limit, panics past twice the limit (the
// server reclaims the query) while its operator holds a batch of an
// in-memory table, and fails with RESOURCE_EXHAUSTED naming the limit.
// Once the query has ended and the table is dropped and released, the
// table's own checked allocator must be back at zero: no operator's
// unwinding left a reference to the table's batch (the query borrows the
// table's records and releases them at its end, vector/borrow.go).
func TestPastTwiceLimitTableBatchesReleased(t *testing.T) {
	const limit = 16 << 20
	tables := plan.NewMemoryCatalog()
	srv, mem := startGovernedServerOn(t, memory.NewGoAllocator(), 1, Limits{QueryMemoryBytes: limit, QueryTimeout: 5 * time.Minute}, tables)
	base := mem.CurrentAlloc()
	cl := sqlClient(t, srv)
	ctx := context.Background()
	for _, c := range heldTableOps {
		t.Run(c.name, func(t *testing.T) {
			tmem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			tb := wideTable(t, tmem)
			tables.Register("wide", tb)
			before := srv.pool.reclaimed.Load()
			err := runFlightSQL(ctx, cl, c.sql)
			st, _ := status.FromError(err)
			if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "memory limit of 16777216 bytes") {
				t.Errorf("got %v, want ResourceExhausted naming the 16 MiB limit", err)
			}
			waitFor(t, time.Minute, "the query to end", func() bool { return srv.active.Load() == 0 })
			if n, want := srv.pool.reclaimed.Load()-before, map[bool]int64{false: 1, true: 0}[c.refused]; n != want {
				t.Errorf("%d queries reclaimed, want %d (%s)", n, want, st.Message())
			}
			tables.Drop("wide")
			tb.Release()
			if got := tmem.CurrentAlloc(); got != 0 {
				t.Errorf("the dropped table's allocator holds %d bytes: a batch of the table stayed retained", got)
			}
			if got := mem.CurrentAlloc(); got != base {
				t.Errorf("the server's checked allocator holds %d bytes, %d before the query", got, base)
			}
			if got := srv.pool.inUse.Load(); got != 0 {
				t.Errorf("the server's pool counts %d bytes of queries, want 0", got)
			}
		})
	}
}
