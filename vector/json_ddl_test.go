package vector_test

import (
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/vector"
)

func TestParseDDLSchema(t *testing.T) {
	cases := []struct {
		text, want, err string
	}{
		{"a INT, b STRING, c ARRAY<BIGINT>", "struct<a: int32, b: utf8, c: list<item: int64, nullable>>", ""},
		{"struct<a: int, b: struct<x double, `y z`: boolean>>", "struct<a: int32, b: struct<x: float64, y z: bool>>", ""},
		{"STRUCT<>", "struct<>", ""},
		{"  ts TIMESTAMP NOT NULL COMMENT 'when', d DATE, n DECIMAL(12, 2), v VARCHAR(10), bin BINARY, l LONG ", "struct<ts: timestamp[us, tz=UTC], d: date32, n: decimal(12, 2), v: utf8, bin: binary, l: int64>", ""},
		{"struct INT", "struct<struct: int32>", ""},
		{"`a``b` int", "struct<a`b: int32>", ""},
		{"", "", "has no fields"},
		{"a", "", "want a type"},
		{"a INT,", "", "want a field after ','"},
		{"a INT b INT", "", "unexpected \"b INT\""},
		{"a MAP<STRING, INT>", "struct<a: map<utf8, int32, items_nullable>>", ""},
		{"a MAP<STRING INT>", "", "want ','"},
		{"a ARRAY<INT", "", "want '>'"},
		{"a DECIMAL(40, 2)", "", "invalid DECIMAL(40, 2)"},
		{"a DECIMAL(x)", "", "want a number"},
		{"a INT, A STRING", "", "duplicate field A"},
		{"`a INT", "", "unterminated quoted field name"},
		{"a INT COMMENT 'x", "", "unterminated comment"},
		{"a INT NOT", "", "want NULL after NOT"},
		{"struct<a int> x", "", "after the struct type"},
		{"a " + strings.Repeat("ARRAY<", 70), "", "nested deeper than 64"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			st, err := vector.ParseDDLSchema(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := st.String(); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// FuzzParseDDLSchema: no schema text may panic, and every field of a
// parsed schema is nullable.
func FuzzParseDDLSchema(f *testing.F) {
	for _, s := range []string{"a INT, b STRING, c ARRAY<BIGINT>", "struct<a: struct<b: array<decimal(3,1)>>>", "`x` date NOT NULL COMMENT 'c'", "a DECIMAL(1,0)", "a ARRAY<ARRAY<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := vector.ParseDDLSchema(s)
		if err != nil {
			return
		}
		for _, fl := range st.Fields() {
			if !fl.Nullable {
				t.Fatalf("%q: field %s not nullable", s, fl.Name)
			}
		}
	})
}
