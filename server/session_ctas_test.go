package server

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestSessionEngineCTASAndMemoryInsert: through Flight SQL (ADBC), CREATE
// TABLE ... AS SELECT makes a static table with the query's rows, INSERT
// with a column list and INSERT OVERWRITE change it, and INSERT INTO a
// USING memory table feeds a streaming table that reads it.
func TestSessionEngineCTASAndMemoryInsert(t *testing.T) {
	_, srv := startSessionServer(t)
	cn := adbcConn(t, srv, nil)
	execSQL(t, cn, "CREATE TABLE dims AS SELECT id AS k, CAST(id * 10 AS STRING) AS v FROM range(3)")
	execSQL(t, cn, "INSERT INTO dims (v, k) VALUES ('x', 7L)")
	recs := mustQuery(t, cn, "SELECT k, v FROM dims ORDER BY k")
	if rows := vt.RowsOf(recs...); len(rows) != 4 || rows[3][0] != int64(7) || rows[3][1] != "x" || rows[1][1] != "10" {
		t.Fatalf("dims after CTAS and INSERT: %v", rows)
	}
	execSQL(t, cn, "INSERT OVERWRITE dims SELECT 1L, 'one'")
	recs = mustQuery(t, cn, "SELECT count(*) FROM dims")
	if rows := vt.RowsOf(recs...); rows[0][0] != int64(1) {
		t.Fatalf("dims after INSERT OVERWRITE: %v", rows)
	}

	execSQL(t, cn, "CREATE TABLE events (k BIGINT) USING memory")
	execSQL(t, cn, `CREATE STREAMING TABLE per_k TBLPROPERTIES ('outputMode' = 'complete')
		AS SELECT k, count(*) AS n FROM STREAM events GROUP BY k`)
	execSQL(t, cn, "INSERT INTO events SELECT k FROM dims UNION ALL SELECT 1L UNION ALL SELECT 2L")
	waitFor(t, 2*time.Minute, "per_k to count the inserted rows", func() bool {
		recs, err := query(context.Background(), cn, "SELECT n FROM per_k WHERE k = 1", nil)
		if err != nil {
			return false
		}
		defer releaseAll(recs)
		return len(recs) > 0 && recs[0].NumRows() == 1 && vector.ValueAt(recs[0].Column(0), 0) == int64(2)
	})
	execSQL(t, cn, "DROP TABLE per_k")
}
