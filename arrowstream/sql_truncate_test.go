package arrowstream

import (
	"context"
	"testing"
)

// TestTruncateTable: TRUNCATE TABLE empties a static table, which keeps
// its columns and takes rows again; views, streams and missing tables
// refuse it.
func TestTruncateTable(t *testing.T) {
	s, _ := newTestSession(t)
	defer func() {
		for _, n := range []string{"tr", "trm"} {
			_, _ = s.SQL(context.Background(), "DROP TABLE IF EXISTS "+n)
		}
	}()
	mustSQL(t, s, "CREATE TABLE tr (a INT, b STRING)")
	mustSQL(t, s, "INSERT INTO tr VALUES (1, 'x'), (2, 'y')")
	mustSQL(t, s, "TRUNCATE TABLE tr")
	wantRows(t, s, "SELECT count(*) FROM tr", "0")
	mustSQL(t, s, "INSERT INTO tr VALUES (3, 'z')")
	wantRows(t, s, "SELECT a, b FROM tr", "3|z")
	mustSQL(t, s, "TRUNCATE TABLE tr")
	mustSQL(t, s, "TRUNCATE TABLE tr") // an empty table stays empty
	wantRows(t, s, "SELECT count(*) FROM tr", "0")

	mustSQL(t, s, "CREATE TEMPORARY VIEW trv AS SELECT 1 AS a")
	sqlErr(t, s, "TRUNCATE TABLE trv", "not supported")
	mustSQL(t, s, "CREATE TABLE trm (a BIGINT) USING memory")
	sqlErr(t, s, "TRUNCATE TABLE trm", "not supported")
	sqlErr(t, s, "TRUNCATE TABLE no_such_table", "not found")
}
