package arrowstream

import (
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestSQLSessionTimestampType: under spark.sql.timestampType=TIMESTAMP_NTZ
// a table's TIMESTAMP columns, CTAS columns and literals are TIMESTAMP_NTZ,
// and keep that type (and their wall clocks) after the session goes back
// to TIMESTAMP_LTZ and changes its time zone.
func TestSQLSessionTimestampType(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem})
	defer func() {
		for _, n := range []string{"ts_ntz", "ts_ctas"} {
			_ = execSQL(s, "DROP TABLE IF EXISTS "+n)
		}
	}()
	for _, q := range []string{
		"SET spark.sql.timestampType = TIMESTAMP_NTZ",
		"CREATE TABLE ts_ntz AS SELECT * FROM VALUES (TIMESTAMP '2022-01-01 10:00:00', 1), (to_timestamp('2022-03-13 02:30:00'), 2) AS v(ts, k)",
		"CREATE TABLE ts_ctas AS SELECT TIMESTAMP '2022-06-01 00:00:00' AS t, TIMESTAMP '2022-06-01 00:00:00Z' AS z",
		"SET spark.sql.timestampType = TIMESTAMP_LTZ",
		"SET spark.sql.session.timeZone = America/Los_Angeles",
	} {
		if err := execSQL(s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for q, want := range map[string]string{
		"SELECT typeof(ts) FROM ts_ntz WHERE k = 1":                               "timestamp_ntz",
		"SELECT CAST(ts AS STRING) FROM ts_ntz WHERE k = 1":                       "2022-01-01 10:00:00",
		"SELECT CAST(ts AS STRING) FROM ts_ntz WHERE k = 2":                       "2022-03-13 02:30:00",
		"SELECT typeof(t) || ' ' || typeof(z) FROM ts_ctas":                       "timestamp_ntz timestamp",
		"SELECT CAST(z AS STRING) FROM ts_ctas":                                   "2022-05-31 17:00:00",
		"SELECT typeof(TIMESTAMP '2022-01-01 10:00:00')":                          "timestamp",
		"SELECT count(*) FROM ts_ntz WHERE ts < TIMESTAMP '2022-01-01 18:00:01Z'": "1",
	} {
		got, err := sqlValue(t, s, q)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", q, got, err, want)
		}
	}
	if err := execSQL(s, "SET spark.sql.timestampType = TIMESTAMP_XYZ"); err == nil {
		t.Errorf("SET spark.sql.timestampType = TIMESTAMP_XYZ accepted")
	}
}
