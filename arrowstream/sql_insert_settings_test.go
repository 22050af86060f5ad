package arrowstream

import (
	"context"
	"testing"
)

// TestInsertUnderSessionSettings: the query of an INSERT or a CTAS
// computes under the session's settings, as a SELECT does: a TIMESTAMP
// literal without a zone is a wall time in spark.sql.session.timeZone, and
// with spark.sql.ansi.enabled=false a malformed cast is NULL. The casts to
// the table's column types stay ANSI casts in the session zone (Spark's
// default store assignment policy, ANSI). 1997-01-02 00:00 in
// America/Los_Angeles is 08:00 UTC, 852192000 seconds after the epoch.
func TestInsertUnderSessionSettings(t *testing.T) {
	s, _ := newTestSession(t)
	defer func() {
		for _, n := range []string{"c", "t"} {
			_, _ = s.SQL(context.Background(), "DROP TABLE IF EXISTS "+n)
		}
	}()
	mustSQL(t, s, "SET spark.sql.session.timeZone=America/Los_Angeles")
	mustSQL(t, s, "CREATE TABLE c AS SELECT TIMESTAMP '1997-01-02' AS d")
	wantRows(t, s, "SELECT CAST(d AS STRING), CAST(d AS BIGINT) FROM c", "1997-01-02 00:00:00|852192000")
	mustSQL(t, s, "CREATE TABLE t (d TIMESTAMP, i INT, l BIGINT)")
	mustSQL(t, s, "INSERT INTO t VALUES (TIMESTAMP '1997-01-02', 1, 1)")
	mustSQL(t, s, "INSERT INTO t SELECT timestamp('1997-01-02 03:04:05'), 2, 2")
	// A DATE written to a TIMESTAMP column is its midnight in the session
	// zone (the store-assignment cast).
	mustSQL(t, s, "INSERT INTO t SELECT DATE '1997-01-02', 3, 3")
	wantRows(t, s, "SELECT i, CAST(d AS STRING), CAST(d AS BIGINT) FROM t",
		"1|1997-01-02 00:00:00|852192000", "2|1997-01-02 03:04:05|852203045", "3|1997-01-02 00:00:00|852192000")

	mustSQL(t, s, "SET spark.sql.ansi.enabled=false")
	mustSQL(t, s, "INSERT INTO t SELECT NULL, CAST('x' AS INT), 4")
	wantRows(t, s, "SELECT i, l FROM t WHERE l = 4", "NULL|4")
	// An INT column refuses a BIGINT that does not fit, ANSI off or not.
	sqlErr(t, s, "INSERT INTO t SELECT NULL, 4294967296L, 5", "CAST_OVERFLOW")
	wantRows(t, s, "SELECT count(*) FROM t", "4")
}
