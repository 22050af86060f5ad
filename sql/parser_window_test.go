package sql

import (
	"strings"
	"testing"
)

// windowQueries are window-syntax queries and their canonical text (also
// seeds of FuzzParse).
var windowQueries = []struct{ src, want string }{
	{"SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t",
		"SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t"},
	{"select sum(x) over (partition by a, b order by c desc nulls first, d rows between unbounded preceding and current row) from t",
		"SELECT sum(x) OVER (PARTITION BY a, b ORDER BY c DESC NULLS FIRST, d ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t"},
	{"SELECT avg(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND INTERVAL '2' HOUR FOLLOWING) FROM t",
		"SELECT avg(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND INTERVAL '2' HOURS FOLLOWING) FROM t"},
	{"SELECT count(*) OVER (ROWS 2 PRECEDING) FROM t", "SELECT count(*) OVER (ROWS 2 PRECEDING) FROM t"},
	{"SELECT max(x) OVER (ORDER BY y RANGE BETWEEN 1 + 1 PRECEDING AND UNBOUNDED FOLLOWING) FROM t",
		"SELECT max(x) OVER (ORDER BY y RANGE BETWEEN (1 + 1) PRECEDING AND UNBOUNDED FOLLOWING) FROM t"},
	{"SELECT lag(x, 2, 0) IGNORE NULLS OVER w FROM t WINDOW w AS (PARTITION BY a ORDER BY b)",
		"SELECT lag(x, 2, 0) IGNORE NULLS OVER w FROM t WINDOW w AS (PARTITION BY a ORDER BY b)"},
	{"SELECT first_value(x) RESPECT NULLS OVER (w ORDER BY b) FROM t WINDOW w AS (PARTITION BY a), v AS (w)",
		"SELECT first_value(x) RESPECT NULLS OVER (w ORDER BY b) FROM t WINDOW w AS (PARTITION BY a), v AS (w)"},
	{"SELECT a, rank() OVER (DISTRIBUTE BY a SORT BY b) r FROM t QUALIFY r <= 2",
		"SELECT a, rank() OVER (PARTITION BY a ORDER BY b) AS r FROM t QUALIFY r <= 2"},
	{"SELECT a FROM t QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1 WINDOW w AS ()",
		"SELECT a FROM t WINDOW w AS () QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1"},
	{"SELECT sum(sum(x)) OVER (ORDER BY k) FROM t GROUP BY k HAVING count(*) > 1 WINDOW w AS (ORDER BY k)",
		"SELECT sum(sum(x)) OVER (ORDER BY k) FROM t GROUP BY k HAVING count(*) > 1 WINDOW w AS (ORDER BY k)"},
	{"SELECT count(x) FILTER (WHERE x > 0) OVER () FROM t", "SELECT count(x) FILTER (WHERE x > 0) OVER () FROM t"},
	// Words of the window syntax stay usable as names.
	{"SELECT rows, range, current, row, window FROM t window", "SELECT rows, range, current, row, window FROM t AS window"},
	{"SELECT x over FROM t", "SELECT x AS over FROM t"},
}

func TestParseWindow(t *testing.T) {
	for _, c := range windowQueries {
		st, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		got := checkRoundTrip(t, c.src, st, Parse)
		if got != c.want {
			t.Errorf("Format(Parse(%q)) = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestParseWindowErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"SELECT sum(x) OVER (PARTITION a) FROM t", "expected PARTITION BY, ORDER BY, ROWS, RANGE or ')'"},
		{"SELECT sum(x) OVER (ROWS BETWEEN 1 PRECEDING) FROM t", "expected AND after the frame start"},
		{"SELECT sum(x) OVER (ROWS 1) FROM t", "expected PRECEDING or FOLLOWING after the frame offset"},
		{"SELECT sum(x) OVER (ORDER BY a ROWS UNBOUNDED) FROM t", "PRECEDING or FOLLOWING"},
		{"SELECT a FROM t WINDOW w AS", "expected '(' or a window name after AS"},
		{"SELECT a FROM t QUALIFY", "expected an expression after QUALIFY"},
		{"SELECT sum(x) OVER (ORDER BY a) OVER () FROM t", "expected"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.src, err, c.want)
		}
	}
}
