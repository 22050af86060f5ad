package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/plan"
)

// oneString runs a query of one row and one column over ADBC and returns
// its value as text ("NULL" for null).
func oneString(t *testing.T, cn adbc.Connection, text string) string {
	t.Helper()
	recs := mustQuery(t, cn, text)
	for _, r := range recs {
		if r.NumRows() == 0 {
			continue
		}
		col := r.Column(int(r.NumCols()) - 1)
		if col.IsNull(0) {
			return "NULL"
		}
		if s, ok := col.(*array.String); ok {
			return s.Value(0)
		}
		return col.ValueStr(0)
	}
	t.Fatalf("%s: no rows", text)
	return ""
}

// TestFlightSQLSessionSettings: SET over one ADBC connection changes that
// connection's session only; another connection and the embedded session
// keep their settings; an unknown key is refused as embedded; the
// settings of a closed connection are forgotten.
func TestFlightSQLSessionSettings(t *testing.T) {
	sess, srv := startSessionServer(t)
	legacy := adbcConn(t, srv, nil)
	ansi := adbcConn(t, srv, nil)
	ctx := context.Background()

	execSQL(t, legacy, "SET spark.sql.ansi.enabled = false")
	execSQL(t, ansi, "SET spark.sql.session.timeZone = America/Los_Angeles")

	// ANSI off in one session: an invalid cast is NULL there, an error in
	// the other.
	if got := oneString(t, legacy, "SELECT CAST('abc' AS INT) AS v"); got != "NULL" {
		t.Errorf("ANSI off: CAST('abc' AS INT) = %s, want NULL", got)
	}
	if _, err := query(ctx, ansi, "SELECT CAST('abc' AS INT) AS v", nil); err == nil || !strings.Contains(err.Error(), "CAST_INVALID_INPUT") {
		t.Errorf("ANSI on: CAST('abc' AS INT) gave %v, want CAST_INVALID_INPUT", err)
	}
	// The time zone of one session: the epoch is 1969-12-31 16:00 in Los
	// Angeles, and midnight in UTC in the other session.
	if got := oneString(t, ansi, "SELECT CAST(CAST(0 AS TIMESTAMP) AS STRING) AS v"); got != "1969-12-31 16:00:00" {
		t.Errorf("Los Angeles session: %s", got)
	}
	if got := oneString(t, legacy, "SELECT CAST(CAST(0 AS TIMESTAMP) AS STRING) AS v"); got != "1970-01-01 00:00:00" {
		t.Errorf("UTC session: %s", got)
	}
	// SET key answers the session's value, as Spark's SET does.
	if got := oneString(t, ansi, "SET spark.sql.session.timeZone"); got != "America/Los_Angeles" {
		t.Errorf("SET spark.sql.session.timeZone in its session = %s", got)
	}
	if got := oneString(t, legacy, "SET spark.sql.session.timeZone"); got != "<undefined>" {
		t.Errorf("SET spark.sql.session.timeZone in the other session = %s", got)
	}
	// The embedded session is untouched.
	if v, ok := sess.Conf(plan.ConfANSI); ok {
		t.Errorf("the embedded session got %s=%s", plan.ConfANSI, v)
	}
	if _, err := sess.SQL(ctx, "SELECT CAST('abc' AS INT)"); err == nil {
		// Planning folds the constant cast, so the error is raised by SQL.
		t.Error("the embedded session runs without ANSI after a client's SET")
	}

	// Refusals, as embedded: an unknown key, a value the engine does not
	// implement, a bad value; none changes the session.
	for _, bad := range []string{
		"SET spark.sql.no.such.setting = 1",
		"SET spark.sql.groupByAliases = false",
		"SET spark.sql.ansi.enabled = maybe",
		"SET spark.sql.session.timeZone = Mars/Olympus",
	} {
		st, err := legacy.NewStatement()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetSqlQuery(bad); err != nil {
			t.Fatal(err)
		}
		_, err = st.ExecuteUpdate(ctx)
		st.Close()
		if err == nil {
			t.Errorf("%s: accepted", bad)
		}
		if _, embeddedErr := sess.SQL(ctx, bad); embeddedErr == nil {
			t.Errorf("%s: the embedded session accepts it", bad)
		}
	}
	if got := oneString(t, legacy, "SELECT CAST('abc' AS INT) AS v"); got != "NULL" {
		t.Errorf("after refused SETs: %s, want NULL (ANSI still off)", got)
	}

	// A streaming table created from a session with other settings would
	// run under the server's: refused.
	execSQL(t, ansi, "CREATE TABLE src (v BIGINT) USING memory")
	st, err := legacy.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery("CREATE STREAMING TABLE out AS SELECT v FROM STREAM src"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecuteUpdate(ctx); err == nil || !strings.Contains(err.Error(), "server session's settings") {
		t.Errorf("CREATE STREAMING TABLE under other session settings: %v", err)
	}

	// Closing a connection forgets its settings.
	before := srv.settings.open()
	if err := legacy.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for srv.settings.open() >= before {
		if time.Now().After(deadline) {
			t.Fatalf("settings of the closed connection kept: %d open", srv.settings.open())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
