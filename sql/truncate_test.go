package sql

import (
	"strings"
	"testing"
)

func TestParseTruncate(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"TRUNCATE TABLE t", "TRUNCATE TABLE t"},
		{"truncate table db.t;", "TRUNCATE TABLE db.t"},
		{"TRUNCATE TABLE `odd name`", "TRUNCATE TABLE `odd name`"},
		{"TRUNCATE TABLE truncate", "TRUNCATE TABLE truncate"}, // a table called truncate
	} {
		st, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if _, ok := st.(*Truncate); !ok {
			t.Fatalf("%q: got %T", c.in, st)
		}
		if got := Format(st); got != c.out {
			t.Errorf("%q formats as %q, want %q", c.in, got, c.out)
		}
	}
	// TRUNCATE is a statement word only before TABLE: elsewhere a name.
	if _, err := Parse("SELECT truncate FROM truncate"); err != nil {
		t.Errorf("truncate as a name: %v", err)
	}
	for _, c := range []struct{ in, want string }{
		{"TRUNCATE TABLE", "expected a table name after TRUNCATE TABLE"},
		{"TRUNCATE TABLE t PARTITION (a = 1)", "found 'PARTITION'"},
		{"TRUNCATE t", "expected a statement"},
	} {
		if _, err := Parse(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
