package sql

import (
	"strings"
	"testing"
)

// TestParseLateralView: LATERAL VIEW [OUTER] f(args) table [AS] cols
// wraps the whole FROM clause, chains, and formats back to itself.
func TestParseLateralView(t *testing.T) {
	cases := []struct{ src, want string }{
		{"SELECT x FROM t LATERAL VIEW explode(a) v AS x", "SELECT x FROM t LATERAL VIEW explode(a) v AS x"},
		{"SELECT * FROM t LATERAL VIEW OUTER posexplode(a) v p, x", "SELECT * FROM t LATERAL VIEW OUTER posexplode(a) v AS p, x"},
		{"SELECT * FROM t LATERAL VIEW json_tuple(j, 'a', 'b') v", "SELECT * FROM t LATERAL VIEW json_tuple(j, 'a', 'b') v"},
		{"SELECT * FROM t, u LATERAL VIEW explode(a) v AS x LATERAL VIEW stack(2, x, 1) w AS y WHERE y > 0",
			"SELECT * FROM t CROSS JOIN u LATERAL VIEW explode(a) v AS x LATERAL VIEW stack(2, x, 1) w AS y WHERE y > 0"},
	}
	for _, c := range cases {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		q, ok := st.(*Query)
		if !ok {
			t.Fatalf("%s: got %T", c.src, st)
		}
		if _, ok := q.Body.(*Select).From[0].(*LateralView); !ok {
			t.Fatalf("%s: FROM is %T, want a LateralView", c.src, q.Body.(*Select).From[0])
		}
		if got := checkRoundTrip(t, c.src, st, Parse); got != c.want {
			t.Errorf("%s: formatted %q, want %q", c.src, got, c.want)
		}
	}
	bad := []struct{ src, err string }{
		{"SELECT * FROM t LATERAL VIEW explode", "'(' after the generator of LATERAL VIEW"},
		{"SELECT * FROM t LATERAL VIEW explode(a)", "a table alias after the generator"},
		{"SELECT * FROM t LATERAL VIEW explode(a) v AS", "a column alias of LATERAL VIEW"},
		{"SELECT * FROM t LATERAL VIEW a.explode(x) v", "generator names cannot be qualified"},
	}
	for _, c := range bad {
		if _, err := Parse(c.src); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.err)
		}
	}
}
