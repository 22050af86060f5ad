package sql

import (
	"strings"
	"testing"
)

// breadth lists the statements of Spark's SQL that tables without files,
// settings and FILTER need, with their canonical form.
var breadth = []struct{ in, out string }{
	{"VALUES (1, 'a'), (2, 'b')", "VALUES (1, 'a'), (2, 'b')"},
	{"VALUES 1, 2", "VALUES (1), (2)"},
	{"SELECT * FROM VALUES (1, 'a') AS t(a, b)", "SELECT * FROM (VALUES (1, 'a')) AS t(a, b)"},
	{"SELECT * FROM VALUES (1), (2) t", "SELECT * FROM (VALUES (1), (2)) AS t"},
	{"SELECT a FROM (SELECT 1) AS s(a)", "SELECT a FROM (SELECT 1) AS s(a)"},
	{"VALUES (1, 2) tbl(c1, c2)", "SELECT * FROM (VALUES (1, 2)) AS tbl(c1, c2)"},
	{"CREATE TEMPORARY VIEW v AS SELECT 1", "CREATE TEMPORARY VIEW v AS SELECT 1"},
	{"create or replace temp view v(a, b) as values (1, 2)", "CREATE OR REPLACE TEMPORARY VIEW v(a, b) AS VALUES (1, 2)"},
	{"CREATE GLOBAL TEMPORARY VIEW IF NOT EXISTS v AS SELECT 1", "CREATE GLOBAL TEMPORARY VIEW IF NOT EXISTS v AS SELECT 1"},
	{"CREATE VIEW v AS SELECT 1", "CREATE TEMPORARY VIEW v AS SELECT 1"},
	{"DROP VIEW IF EXISTS v", "DROP VIEW IF EXISTS v"},
	{"INSERT INTO t VALUES (1, NULL)", "INSERT INTO t VALUES (1, NULL)"},
	{"insert into table t select * from s", "INSERT INTO t SELECT * FROM s"},
	{"SET spark.sql.shuffle.partitions=4", "SET spark.sql.shuffle.partitions = '4'"},
	{"SET spark.sql.session.timeZone = America/Los_Angeles", "SET spark.sql.session.timeZone = 'America/Los_Angeles'"},
	{"SET spark.sql.ansi.enabled", "SET spark.sql.ansi.enabled"},
	{"SELECT * FROM a NATURAL JOIN b", "SELECT * FROM a NATURAL JOIN b"},
	{"SELECT * FROM a NATURAL LEFT OUTER JOIN b NATURAL FULL JOIN c", "SELECT * FROM a NATURAL LEFT OUTER JOIN b NATURAL FULL OUTER JOIN c"},
	{"SELECT count(*) FILTER (WHERE a > 1), sum(DISTINCT b) filter (where c) FROM t", "SELECT count(*) FILTER (WHERE a > 1), sum(DISTINCT b) FILTER (WHERE c) FROM t"},
	{"SELECT count(*) filter FROM t", "SELECT count(*) AS filter FROM t"},
	{"SELECT a FROM t LIMIT ALL", "SELECT a FROM t"},
	{"SELECT a FROM t EXCEPT SELECT a FROM s", "SELECT a FROM t EXCEPT SELECT a FROM s"},
	{"SELECT a FROM t MINUS ALL SELECT a FROM s", "SELECT a FROM t EXCEPT ALL SELECT a FROM s"},
	{"SELECT 1 UNION SELECT 2 INTERSECT DISTINCT SELECT 3", "SELECT 1 UNION (SELECT 2 INTERSECT SELECT 3)"},
	{"(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3", "(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3"},
	{"SELECT 1 INTERSECT SELECT 2 EXCEPT SELECT 3", "SELECT 1 INTERSECT SELECT 2 EXCEPT SELECT 3"},
}

func TestBreadthStatements(t *testing.T) {
	for _, tc := range breadth {
		s, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := Format(s); got != tc.out {
			t.Errorf("Format(Parse(%q))\n got %s\nwant %s", tc.in, got, tc.out)
		}
		checkPositions(t, tc.in, s)
		checkRoundTrip(t, tc.in, s, Parse)
	}
}

func TestBreadthErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT * FROM a NATURAL CROSS JOIN b", "NATURAL CROSS JOIN is not supported"},
		{"SELECT * FROM a NATURAL JOIN b ON a.x = b.x", "expected"},
		{"SELECT * FROM a NATURAL b", "JOIN after NATURAL"},
		{"INSERT t VALUES (1)", "INTO or OVERWRITE after INSERT"},
		{"INSERT INTO t () VALUES (1)", "column name"},
		{"CREATE TEMPORARY VIEW v", "AS and a query"},
		{"CREATE GLOBAL VIEW v AS SELECT 1", "TEMPORARY after GLOBAL"},
		{"SET", "a setting name after SET"},
		{"SELECT count(*) FILTER (a > 1) FROM t", "WHERE after FILTER"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
