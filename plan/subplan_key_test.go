package plan_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSubplanKey: plans that compute the same rows from the same streams
// get the same key whatever their aliases; a difference in the source,
// window, watermark, aggregates, filter, column or type does not; and
// plans with a nondeterministic call or a batch scan get none.
func TestSubplanKey(t *testing.T) {
	cat := testCatalog(t)
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	bidSchema := arrow.NewSchema([]arrow.Field{f("a", vector.Int64), f("b", vector.Int64), f("ts", vector.Timestamp)}, nil)
	cat.Register("bids", &plan.SourceTable{TableSchema: bidSchema})
	cat.Register("bids2", &plan.SourceTable{TableSchema: bidSchema})
	agg := func(from, delay, window, aggs, where string) string {
		return fmt.Sprintf("SELECT a, window, %s FROM %s WATERMARK ts DELAY OF INTERVAL %s SECONDS %s GROUP BY a, window(ts, %s)", aggs, from, delay, where, window)
	}
	base := agg("STREAM bids", "2", "'10 seconds', '2 seconds'", "count(*) AS n", "")
	ids := map[plan.Table]int{} // the same table: the same source
	key := func(t *testing.T, q string) (string, bool) {
		t.Helper()
		opt, err := plan.Optimize(analyzeT(t, cat, q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return plan.SubplanKey(opt, func(s *plan.Scan) (string, bool) {
			if _, ok := ids[s.Table]; !ok {
				ids[s.Table] = len(ids)
			}
			return fmt.Sprint(ids[s.Table]), true
		})
	}
	baseKey, ok := key(t, base)
	if !ok {
		t.Fatalf("no key for %s", base)
	}
	for _, c := range []struct {
		name, sql string
		same      bool
	}{
		{"itself", base, true},
		{"aliases", "SELECT x.a, window, count(*) AS n FROM (SELECT * FROM STREAM bids WATERMARK ts DELAY OF INTERVAL 2 SECONDS) AS x GROUP BY x.a, window(x.ts, '10 seconds', '2 seconds')", true},
		{"cte", "WITH c AS (" + base + ") SELECT * FROM c", true},
		{"other-stream", agg("STREAM bids2", "2", "'10 seconds', '2 seconds'", "count(*) AS n", ""), false},
		{"delay", agg("STREAM bids", "3", "'10 seconds', '2 seconds'", "count(*) AS n", ""), false},
		{"width", agg("STREAM bids", "2", "'12 seconds', '2 seconds'", "count(*) AS n", ""), false},
		{"slide", agg("STREAM bids", "2", "'10 seconds', '5 seconds'", "count(*) AS n", ""), false},
		{"aggregate", agg("STREAM bids", "2", "'10 seconds', '2 seconds'", "count(b) AS n", ""), false},
		{"name", agg("STREAM bids", "2", "'10 seconds', '2 seconds'", "count(*) AS m", ""), false},
		{"filter", agg("STREAM bids", "2", "'10 seconds', '2 seconds'", "count(*) AS n", "WHERE b > 3"), false},
		{"expression", agg("STREAM bids", "2", "'10 seconds', '2 seconds'", "sum(b + 1) AS n", ""), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, ok := key(t, c.sql)
			if !ok {
				t.Fatalf("no key for %s", c.sql)
			}
			if (k == baseKey) != c.same {
				t.Fatalf("same key %v, want %v:\n%s\n%s", k == baseKey, c.same, k, baseKey)
			}
		})
	}
	// The same plan over one column or another of the same name: a
	// self-join's b.a is not its a.
	l, _ := key(t, "SELECT x.a FROM STREAM bids AS x JOIN STREAM bids AS y ON x.b = y.b")
	r, _ := key(t, "SELECT y.a FROM STREAM bids AS x JOIN STREAM bids AS y ON x.b = y.b")
	if l == "" || l == r {
		t.Fatalf("x.a and y.a of a self-join have the same key %q", l)
	}
	if k, ok := key(t, "SELECT a, count(*) AS n FROM t GROUP BY a"); ok {
		t.Errorf("a batch scan has the key %q, want none", k)
	}
	// A nondeterministic call (the optimizer folds those without
	// arguments from columns, so the filter is built here).
	in, err := plan.Optimize(analyzeT(t, cat, "SELECT a, b FROM STREAM bids"))
	if err != nil {
		t.Fatal(err)
	}
	rnd := &plan.Call{Func: "<", Type: arrow.FixedWidthTypes.Boolean, Null: true, Args: []plan.Expr{
		&plan.Call{Func: "rand", Type: arrow.PrimitiveTypes.Float64, Args: []plan.Expr{&plan.ColumnRef{Index: 0, Name: "a", Type: vector.Int64, Null: true}}},
		&plan.Literal{Value: 0.5, Type: arrow.PrimitiveTypes.Float64}}}
	filtered, err := plan.NewFilter(in, rnd)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := plan.SubplanKey(filtered, func(*plan.Scan) (string, bool) { return "0", true }); ok {
		t.Errorf("a filter on rand() has the key %q, want none", k)
	}
	if _, ok := plan.SubplanKey(in, func(*plan.Scan) (string, bool) { return "0", true }); !ok {
		t.Error("the filter's input has no key")
	}
}
