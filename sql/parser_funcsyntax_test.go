package sql

import "testing"

func TestFunctionSpecialSyntax(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"TRIM(BOTH 'x' FROM s)", "trim('x', s)"},
		{"trim(LEADING 'x' FROM s)", "ltrim('x', s)"},
		{"TRIM(TRAILING FROM s)", "rtrim(s)"},
		{"TRIM('x' FROM s)", "TRIM('x', s)"},
		{"trim(s)", "trim(s)"},
		{"trim(a, b)", "trim(a, b)"},
		{"SUBSTRING(s FROM 2 FOR 3)", "SUBSTRING(s, 2, 3)"},
		{"substr(s FROM -3)", "substr(s, -3)"},
		{"substring(s, 1)", "substring(s, 1)"},
		{"POSITION('a' IN s)", "POSITION('a', s)"},
		{"position('a' IN s || 'b')", "position('a', s || 'b')"},
		{"position(a, b, 2)", "position(a, b, 2)"},
		{"EXTRACT(YEAR FROM d)", "date_part('YEAR', d)"},
		{"extract(dow FROM d + 1)", "date_part('dow', d + 1)"},
		{"OVERLAY('abcdef' PLACING '45' FROM 4)", "OVERLAY('abcdef', '45', 4)"},
		{"overlay(s placing r || 'x' FROM p + 1 FOR 2)", "overlay(s, r || 'x', p + 1, 2)"},
		{"overlay(s, r, 2)", "overlay(s, r, 2)"},
		{"b IS UNKNOWN AND c is not unknown", "b IS UNKNOWN AND c IS NOT UNKNOWN"},
	} {
		e, err := ParseExpr(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := Format(e); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"TRIM(BOTH 'x' s)", "SUBSTRING(s FROM)", "POSITION('a' IN)", "TRIM(LEADING 'x' FROM s, t)", "EXTRACT(YEAR FROM)", "OVERLAY(s PLACING r)", "OVERLAY(s PLACING r FROM 1 FOR)"} {
		if _, err := ParseExpr(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}
