package sql

import "testing"

func TestParseDescribeFunction(t *testing.T) {
	cases := []struct {
		src      string
		name     string
		extended bool
	}{
		{"DESC FUNCTION boolean", "boolean", false},
		{"DESCRIBE FUNCTION EXTENDED boolean", "boolean", true},
		{"DESC FUNCTION 'substr'", "substr", false},
		{"DESC FUNCTION `abs`", "abs", false},
		{"DESCRIBE FUNCTION &", "&", false},
		{"DESC FUNCTION extended", "extended", false},
	}
	for _, c := range cases {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		df, ok := st.(*DescribeFunction)
		if !ok || df.Name != c.name || df.Extended != c.extended {
			t.Errorf("%s: %#v, want name %q extended %v", c.src, st, c.name, c.extended)
			continue
		}
		// Formatting and parsing again keeps the statement.
		back, err := Parse(Format(st))
		if err != nil {
			t.Fatalf("%s: formatted %q: %v", c.src, Format(st), err)
		}
		if b, ok := back.(*DescribeFunction); !ok || b.Name != df.Name || b.Extended != df.Extended {
			t.Errorf("%s: formatted %q parses as %#v", c.src, Format(st), back)
		}
	}
	// A table called function is still described as a table.
	if st, err := Parse("DESCRIBE function"); err != nil {
		t.Fatal(err)
	} else if _, ok := st.(*Describe); !ok {
		t.Errorf("DESCRIBE function: %T, want *Describe", st)
	}
}

func TestParseIsDistinctFrom(t *testing.T) {
	cases := map[string]string{
		"SELECT a IS DISTINCT FROM b":         "SELECT NOT a <=> b",
		"SELECT a IS NOT DISTINCT FROM b + 1": "SELECT a <=> b + 1",
		"SELECT a IS TRUE":                    "SELECT a <=> TRUE",
		"SELECT a IS NOT FALSE":               "SELECT NOT a <=> FALSE",
		"SELECT a IS NOT NULL":                "SELECT a IS NOT NULL",
	}
	checkFormats(t, cases)
}

func TestParseLikeQuantified(t *testing.T) {
	cases := map[string]string{
		"SELECT a LIKE ANY ('x%', 'y')":       "SELECT a LIKE 'x%' OR a LIKE 'y'",
		"SELECT a NOT ILIKE ALL ('x%', b)":    "SELECT a NOT ILIKE 'x%' AND a NOT ILIKE b",
		"SELECT a LIKE SOME ('x')":            "SELECT a LIKE 'x'",
		"SELECT a LIKE 'all' FROM t":          "SELECT a LIKE 'all' FROM t",
		"SELECT any(b) FROM t WHERE a LIKE c": "SELECT any(b) FROM t WHERE a LIKE c",
	}
	checkFormats(t, cases)
	if _, err := Parse("SELECT a LIKE ANY ()"); err == nil {
		t.Error("LIKE ANY (): parsed, want a syntax error")
	}
}

// checkFormats parses each statement and checks that it formats back as
// the SQL it is rewritten to.
func checkFormats(t *testing.T, cases map[string]string) {
	t.Helper()
	for src, want := range cases {
		st, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := Format(st); got != want {
			t.Errorf("%s: formats as %q, want %q", src, got, want)
		}
	}
}
