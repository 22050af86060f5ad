package plan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestConstantStringsOnPoolAllocator runs issue #16's constant string
// queries on the engine's production allocator, a pool over Go memory
// (the SQL logic tests run the same queries on the poisoning allocator,
// constants.slt). Folded constants used to alias a buffer the pool then
// zeroed and handed out again: the answers were NUL bytes or garbage.
// Answers are Spark's.
func TestConstantStringsOnPoolAllocator(t *testing.T) {
	under := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer under.AssertSize(t, 0)
	pool := vector.NewPoolAllocator(under, 0)
	defer pool.Close()
	cat := plan.NewMemoryCatalog()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "page", Type: vector.String, Nullable: true}, {Name: "n", Type: vector.Int32, Nullable: true}}, nil)
	rec := vt.BuildRecord(pool, schema, []vt.Row{{"home", 1}, {"HOME", 2}, {"about", 3}})
	tbl, err := plan.NewMemTable(schema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	cat.Register("v", tbl)
	cases := []struct{ sql, want string }{
		{"SELECT upper('abc')", "ABC"},
		{"SELECT 'a' || 'b'", "ab"},
		{"SELECT substr('Spark SQL', 5)", "k SQL"},
		{"SELECT CAST(12 AS STRING)", "12"},
		{"SELECT split('aa1cc2ee3', '[1-9]+', 2)", "[aa, cc2ee3]"},
		{"SELECT cast(1 AS string) = '1'", "true"},
		{"SELECT page FROM v WHERE page = upper('home')", "HOME"},
	}
	for _, c := range cases {
		// Several rounds: the pool hands released buffers out again.
		for round := 0; round < 3; round++ {
			for _, opt := range []bool{false, true} {
				got, err := runSLTQuery(context.Background(), pool, cat, c.sql, nil, opt)
				if err != nil {
					t.Fatalf("%s (optimized %v): %v", c.sql, opt, err)
				}
				if strings.Join(got, "\n") != c.want {
					t.Fatalf("%s (optimized %v, round %d) = %q, want %q", c.sql, opt, round, got, c.want)
				}
			}
		}
	}
}
