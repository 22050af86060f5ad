package sql

import "testing"

// TestGroupAndOrderAsColumnNames: Spark's default grammar lets GROUP and
// ORDER name columns (StreamingAggregationSuite's SPARK-23004 test does
// selectExpr("value as group").groupBy("group")); only GROUP BY / ORDER BY
// are the clauses.
func TestGroupAndOrderAsColumnNames(t *testing.T) {
	for _, src := range []string{"group", "order", "group + 1", "max(group)"} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", src, err)
			continue
		}
		checkRoundTrip(t, src, e, func(s string) (Expr, error) { return ParseExpr(s) })
	}
	if _, err := ParseSelectItem("group"); err != nil {
		t.Errorf("ParseSelectItem(group): %v", err)
	}
	q := "SELECT group, count(*) FROM (SELECT value AS group FROM t) AS s GROUP BY group ORDER BY group"
	s, err := Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	want := "SELECT `group`, count(*) FROM (SELECT value AS `group` FROM t) AS s GROUP BY `group` ORDER BY `group`"
	if got := Format(s); got != want {
		t.Errorf("Format(Parse(%q))\n got %s\nwant %s", q, got, want)
	}
	// The clauses keep their meaning: GROUP BY right after a table, and an
	// expression cannot start with GROUP BY.
	if _, err := Parse("SELECT a FROM t GROUP BY a"); err != nil {
		t.Errorf("GROUP BY clause: %v", err)
	}
	if _, err := ParseExpr("group by"); err == nil {
		t.Errorf("ParseExpr(group by) parsed")
	}
}
