package sql

import (
	"strings"
	"testing"
)

func TestParseGroupingSets(t *testing.T) {
	sets := func(s *Select) string {
		var parts []string
		for _, set := range s.GroupingSets {
			var es []string
			for _, e := range set {
				es = append(es, Format(e))
			}
			parts = append(parts, "("+strings.Join(es, ",")+")")
		}
		return strings.Join(parts, " ")
	}
	for _, c := range []struct{ src, want string }{
		{"SELECT 1 FROM t GROUP BY ROLLUP(a, b)", "(a,b) (a) ()"},
		{"SELECT 1 FROM t GROUP BY CUBE(a, b)", "(a,b) (a) (b) ()"},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a, b), a, ())", "(a,b) (a) ()"},
		{"SELECT 1 FROM t GROUP BY x, ROLLUP(a)", "(x,a) (x)"},
		{"SELECT 1 FROM t GROUP BY a, b WITH ROLLUP", "(a,b) (a) ()"},
		{"SELECT 1 FROM t GROUP BY a, b WITH CUBE", "(a,b) (a) (b) ()"},
		{"SELECT 1 FROM t GROUP BY ROLLUP((a, b), c)", "(a,b,c) (a,b) ()"},
		{"SELECT 1 FROM t GROUP BY cube(a), rollup(b)", "(a,b) (a) (b) ()"},
	} {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		s := st.(*Query).Body.(*Select)
		if got := sets(s); got != c.want {
			t.Errorf("%s: sets %s, want %s", c.src, got, c.want)
		}
		again, err := Parse(Format(st))
		if err != nil {
			t.Fatalf("%s: formatted %q does not parse: %v", c.src, Format(st), err)
		}
		if got := sets(again.(*Query).Body.(*Select)); got != c.want {
			t.Errorf("%s: after formatting as %q, sets %s", c.src, Format(st), got)
		}
	}
	// A plain GROUP BY has no sets; a function named cube is still a call
	// outside GROUP BY.
	st, err := Parse("SELECT cube(1) FROM t GROUP BY a")
	if err != nil {
		t.Fatal(err)
	}
	if s := st.(*Query).Body.(*Select); s.GroupingSets != nil || len(s.GroupBy) != 1 {
		t.Errorf("plain GROUP BY parsed as %v sets, %d keys", s.GroupingSets, len(s.GroupBy))
	}
	for _, bad := range []string{"SELECT 1 FROM t GROUP BY GROUPING SETS (a", "SELECT 1 FROM t GROUP BY CUBE(a,"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

func TestParseExists(t *testing.T) {
	e, err := ParseExpr("NOT EXISTS (SELECT 1 FROM t WHERE t.k = u.k)")
	if err != nil {
		t.Fatal(err)
	}
	u, ok := e.(*UnaryExpr)
	if !ok || u.Op != OpNot {
		t.Fatalf("got %T", e)
	}
	if s, ok := u.X.(*Subquery); !ok || !s.Exists {
		t.Fatalf("got %#v", u.X)
	}
	if got := Format(e); !strings.HasPrefix(got, "NOT EXISTS (SELECT") {
		t.Errorf("formatted as %q", got)
	}
	// exists without a query is still a name or a call.
	if _, err := ParseExpr("exists(arr, x -> x > 1)"); err == nil {
		t.Log("lambda parsed") // not an error either way: only no panic matters
	}
	if _, err := ParseExpr("exists + 1"); err != nil {
		t.Errorf("exists as a column name: %v", err)
	}
}

func TestParseGroupByAll(t *testing.T) {
	st, err := Parse("SELECT a, count(*) FROM t GROUP BY ALL")
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*Query).Body.(*Select)
	if !s.GroupByAll || s.GroupBy != nil {
		t.Fatalf("GroupByAll %v, GroupBy %v", s.GroupByAll, s.GroupBy)
	}
	if got := Format(st); !strings.HasSuffix(got, "GROUP BY ALL") {
		t.Errorf("formatted as %q", got)
	}
}

func TestParsePivotRoundTrip(t *testing.T) {
	for _, src := range []string{
		"SELECT * FROM t PIVOT (sum(x) AS s, count(*) FOR c IN ('a' AS aa, 2, NULL))",
		"SELECT * FROM (SELECT * FROM t) PIVOT (max(x) FOR t.c IN (1))",
		"SELECT * FROM t PIVOT (sum(x) FOR (a, t.b) IN ((1, 2) AS one, ('x', NULL)))",
		"SELECT * FROM t UNPIVOT (v FOR n IN (a, b AS bee))",
		"SELECT * FROM t UNPIVOT INCLUDE NULLS (v FOR n IN (a))",
		"SELECT * FROM t UNPIVOT EXCLUDE NULLS (v FOR n IN (a))",
	} {
		st, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		f := Format(st)
		again, err := Parse(f)
		if err != nil {
			t.Fatalf("%s: formatted %q does not parse: %v", src, f, err)
		}
		if f2 := Format(again); f2 != f {
			t.Errorf("%s: formats as %q, then %q", src, f, f2)
		}
	}
	for _, bad := range []string{
		"SELECT * FROM t, u PIVOT (sum(x) FOR c IN (1))",
		"SELECT * FROM t PIVOT (sum(x) FOR (a, b + 1) IN ((1, 2)))",
		"SELECT * FROM t PIVOT (sum(x) FOR (a, b IN ((1, 2)))",
		"SELECT * FROM t UNPIVOT ((v, w) FOR n IN ((a, b)))",
		"SELECT * FROM t UNPIVOT INCLUDE (v FOR n IN (a))",
		"SELECT * FROM t PIVOT (sum(x) FOR c IN 1)",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	// pivot and unpivot remain usable as table aliases and names.
	for _, ok := range []string{"SELECT pivot.x FROM t pivot", "SELECT * FROM unpivot"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
