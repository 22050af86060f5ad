package sql

import "testing"

// TestParseFromAsAlias: in "count(*) FROM FROM t" the first FROM is the
// select item's alias (Spark reserves no keyword by default), formatted
// quoted.
func TestParseFromAsAlias(t *testing.T) {
	src := "SELECT nvl(st.col1, 'value'), count(*) FROM FROM tempView1 GROUP BY nvl(st.col1, 'value')"
	st, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT nvl(st.col1, 'value'), count(*) AS `FROM` FROM tempView1 GROUP BY nvl(st.col1, 'value')"
	if got := checkRoundTrip(t, src, st, Parse); got != want {
		t.Errorf("formatted %q, want %q", got, want)
	}
	if _, err := Parse("SELECT a FROM FROM"); err == nil {
		t.Error("SELECT a FROM FROM parsed; the FROM clause needs a table")
	}
}
