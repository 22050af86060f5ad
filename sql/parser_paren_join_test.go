package sql

import "testing"

// TestParseParenJoinAlias: a parenthesized join may start with a
// parenthesized subquery (the outer '(' is then a join's, not a query's),
// and an alias names the whole join: it reads as (SELECT * FROM join)
// alias, as PostgreSQL's join.sql writes ((SELECT ...) ss1 JOIN i4 ON ...) j.
func TestParseParenJoinAlias(t *testing.T) {
	cases := []struct{ src, want string }{
		{"SELECT * FROM ((SELECT f1 / 2 AS x FROM t) ss1 JOIN u i4 ON x = f1) j, LATERAL (SELECT x) ss2(y)",
			"SELECT * FROM (SELECT * FROM (SELECT f1 / 2 AS x FROM t) AS ss1 JOIN u AS i4 ON x = f1) AS j, LATERAL (SELECT x) AS ss2(y)"},
		{"SELECT * FROM (a JOIN b ON a.k = b.k) AS j(p, q)", "SELECT * FROM (SELECT * FROM a JOIN b ON a.k = b.k) AS j(p, q)"},
		{"SELECT * FROM ((SELECT 1 AS k) s CROSS JOIN t)", "SELECT * FROM (SELECT 1 AS k) AS s CROSS JOIN t"},
		// Parentheses around a query stay a subquery.
		{"SELECT * FROM ((SELECT 1 AS k)) s", "SELECT * FROM (SELECT 1 AS k) AS s"},
		{"SELECT * FROM ((SELECT 1 AS k) UNION ALL (SELECT 2)) s", "SELECT * FROM (SELECT 1 AS k UNION ALL SELECT 2) AS s"},
		{"SELECT * FROM ((SELECT 1 AS k) ORDER BY k LIMIT 1) s", "SELECT * FROM (SELECT 1 AS k ORDER BY k LIMIT 1) AS s"},
	}
	for _, c := range cases {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := checkRoundTrip(t, c.src, st, Parse); got != c.want {
			t.Errorf("%s:\nformatted %q\n     want %q", c.src, got, c.want)
		}
	}
}
