package security

import (
	"strings"
	"testing"
)

// TestCastKeepsSmallRanges: over Flight SQL, CAST(300 AS TINYINT) is
// refused with Spark's CAST_OVERFLOW instead of returning 300 (TINYINT
// and SMALLINT are real types, not int aliases); try_cast gives NULL, and
// in-range values pass.
func TestCastKeepsSmallRanges(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	for _, sql := range []string{"SELECT CAST(300 AS TINYINT) AS v", "SELECT CAST(40000 AS SMALLINT) AS v"} {
		rows, err := c.run(t, sql)
		if err == nil || !strings.Contains(err.Error(), "CAST_OVERFLOW") {
			t.Errorf("%s: %v, %v; want CAST_OVERFLOW", sql, rows, err)
		}
	}
	rows := c.mustRun(t, "SELECT try_cast(300 AS TINYINT) AS a, CAST(100 AS TINYINT) AS b, CAST(300 AS SMALLINT) AS c")
	if len(rows) != 1 || rows[0][0] != "NULL" && rows[0][0] != "(null)" || rows[0][1] != "100" || rows[0][2] != "300" {
		t.Errorf("try_cast and in-range casts: %v, want [[NULL 100 300]]", rows)
	}
	e.alive(t)
}
