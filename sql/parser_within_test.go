package sql

import (
	"strings"
	"testing"
)

// TestWithinGroup: percentile_cont(p) WITHIN GROUP (ORDER BY x) parses
// with x as the call's first argument and formats back the same.
func TestWithinGroup(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"SELECT percentile_cont(0.25) within group (order by v) FROM t", "SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY v) FROM t"},
		{"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v DESC) OVER (PARTITION BY k) FROM t", "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v DESC) OVER (PARTITION BY k) FROM t"},
		{"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a + 1 NULLS FIRST) OVER w FROM t WINDOW w AS (PARTITION BY k)", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a + 1 NULLS FIRST) OVER w FROM t WINDOW w AS (PARTITION BY k)"},
		{"SELECT v within FROM t", "SELECT v AS within FROM t"},
	} {
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
	s, err := Parse("SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY v DESC) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	fc := s.(*Query).Body.(*Select).Items[0].Expr.(*FuncCall)
	if fc.Within == nil || !fc.Within.Desc || len(fc.Args) != 2 || Format(fc.Args[0]) != "v" || Format(fc.Args[1]) != "0.25" {
		t.Errorf("WITHIN GROUP call parsed as %#v", fc)
	}
	for _, c := range []struct{ in, want string }{
		{"SELECT percentile_cont(0.25) WITHIN GROUP (v) FROM t", "ORDER BY after WITHIN GROUP ("},
		{"SELECT percentile_cont(0.25) WITHIN GROUP (ORDER v) FROM t", "BY after WITHIN GROUP (ORDER"},
		{"SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY v FROM t", "expected"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
