package arrowstream

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/vector"
)

// TestSQLBatchQueryIsOptimized: Session.SQL runs a batch query's
// optimized plan, as EXPLAIN shows it. The analyzed plan of a comma join
// keeps its WHERE above a cross join: here 20,000 x 20,000 rows, minutes
// of work, where the pushed-down equality makes a hash join of 20,000
// rows (PostgreSQL's join.sql query 108, tenk1 a, tenk1 b, ran into
// Spark's suite's time limit so).
func TestSQLBatchQueryIsOptimized(t *testing.T) {
	s, _ := newTestSession(t)
	mustSQL(t, s, "CREATE TEMPORARY VIEW opt_a AS SELECT id AS k, id % 100 AS h, CAST(id AS STRING) AS name FROM range(20000)")
	mustSQL(t, s, "CREATE TEMPORARY VIEW opt_b AS SELECT id AS k, CAST(id AS STRING) AS name FROM range(20000)")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.SQL(ctx, "SELECT count(*), sum(b.k) FROM opt_a a, opt_b b WHERE a.h = b.k AND b.k % 10 < 10")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	recs, err := vector.Drain(ctx, res.Op)
	if err != nil {
		t.Fatalf("the comma join did not finish: %v", err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) != 1 || recs[0].NumRows() != 1 {
		t.Fatalf("got %d records, want one row", len(recs))
	}
	// Every a row meets the one b row with k = a.h: 20,000 rows, and
	// sum(b.k) is 200 rows of each h in 0..99.
	if got := vector.FormatValue(vector.ValueAt(recs[0].Column(0), 0), recs[0].Column(0).DataType()); got != "20000" {
		t.Errorf("count = %s, want 20000", got)
	}
	if got := vector.FormatValue(vector.ValueAt(recs[0].Column(1), 0), recs[0].Column(1).DataType()); got != "990000" {
		t.Errorf("sum = %s, want 990000", got)
	}
}
