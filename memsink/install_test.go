package memsink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func sqlRows(t *testing.T, s *arrowstream.Session, text string) []vt.Row {
	t.Helper()
	res, err := s.SQL(context.Background(), text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	defer res.Close()
	if res.Op == nil {
		return nil
	}
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	rows := vt.RowsOf(recs...)
	for _, r := range recs {
		r.Release()
	}
	return rows
}

func TestSQLStreamingTableEndToEnd(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir()})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	sqlRows(t, s, "CREATE TABLE clicks USING `rate-micro-batch` OPTIONS (rowsPerBatch 9, advanceMillisPerBatch 1000)")
	res, err := s.SQL(ctx, `CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete')
		AS SELECT value % 3 AS k, count(*) AS n, max(value) AS top FROM STREAM clicks GROUP BY value % 3`)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Query
	if q == nil || q.Name() != "counts" {
		t.Fatalf("no query started: %+v", res)
	}
	// Wait for a few epochs, then read the table while the query runs.
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		if p := q.LastProgress(); p != nil && p.BatchID >= 3 {
			break
		}
		if time.Now().After(deadline) || !q.IsActive() {
			t.Fatalf("query did not progress: %v", q.Exception())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rows := sqlRows(t, s, "SELECT k, n, top FROM counts ORDER BY k")
	if len(rows) != 3 {
		t.Fatalf("counts: %v", rows)
	}
	// Complete mode: each epoch holds the whole result, every key has the
	// same count, and counts grow by 3 per epoch of 9 rows.
	n := rows[0][1].(int64)
	if n%3 != 0 || rows[1][1] != n || rows[2][1] != n {
		t.Fatalf("inconsistent snapshot: %v", rows)
	}
	if hist := sqlRows(t, s, "DESCRIBE HISTORY counts"); len(hist) == 0 {
		t.Fatal("no history")
	}
	if got := sqlRows(t, s, "SHOW TABLES"); len(got) != 2 {
		t.Fatalf("SHOW TABLES: %v", got)
	}
	if got := sqlRows(t, s, "DESCRIBE counts"); !vt.RowsEqual([]vt.Row{{"k", "bigint", nil}, {"n", "bigint", nil}, {"top", "bigint", nil}}, got) {
		t.Fatalf("DESCRIBE: %v", got)
	}
	if got := sqlRows(t, s, "EXPLAIN SELECT k FROM counts WHERE n > 1"); len(got) == 0 || !strings.Contains(got[0][0].(string), "Optimized") {
		t.Fatalf("EXPLAIN: %v", got)
	}
	sqlRows(t, s, "DROP TABLE counts")
	if q.IsActive() {
		t.Fatal("DROP TABLE left the query running")
	}
	if _, err := s.SQL(ctx, "SELECT * FROM counts"); err == nil || !strings.Contains(err.Error(), "counts") {
		t.Fatalf("dropped table still readable: %v", err)
	}
	if _, err := s.SQL(ctx, "DROP TABLE counts"); err == nil {
		t.Fatal("second DROP succeeded")
	}
	sqlRows(t, s, "DROP TABLE IF EXISTS counts")
	sqlRows(t, s, "DROP TABLE clicks")
	if _, err := s.SQL(ctx, "SELECT FROM"); err == nil || !strings.Contains(err.Error(), "syntax error at 1:") {
		t.Fatalf("syntax error: %v", err)
	}
}
