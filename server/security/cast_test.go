package security

import (
	"strings"
	"testing"
)

// TestCastKeepsSmallRanges: over Flight SQL, CAST(300 AS TINYINT) is
// refused with Spark's CAST_OVERFLOW instead of returning 300 (TINYINT
// and SMALLINT are real types, not int aliases); try_cast gives NULL, and
// in-range values keep their type.
func TestCastKeepsSmallRanges(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	for _, sql := range []string{"SELECT CAST(300 AS TINYINT) AS v", "SELECT CAST(40000 AS SMALLINT) AS v"} {
		rows, err := c.run(t, sql)
		if err == nil || !strings.Contains(err.Error(), "CAST_OVERFLOW") {
			t.Errorf("%s: %v, %v; want CAST_OVERFLOW", sql, rows, err)
		}
	}
	rows := c.mustRun(t, "SELECT try_cast(300 AS TINYINT) AS a, typeof(CAST(100 AS TINYINT)) AS b, typeof(CAST(300 AS SMALLINT)) AS c")
	if len(rows) != 1 || rows[0][0] != "NULL" && rows[0][0] != "" || rows[0][1] != "tinyint" || rows[0][2] != "smallint" {
		t.Errorf("try_cast and typeof: %v, want [[NULL tinyint smallint]]", rows)
	}
	e.alive(t)
}
