package sql

import (
	"reflect"
	"testing"
)

func TestParseDescribeTable(t *testing.T) {
	names := func(ids []Ident) []string {
		var out []string
		for _, id := range ids {
			out = append(out, id.Name)
		}
		return out
	}
	cases := []struct {
		src    string
		table  []string
		option string
		column []string
	}{
		{"DESC t", []string{"t"}, "", nil},
		{"DESCRIBE TABLE db.t", []string{"db", "t"}, "", nil},
		{"DESC EXTENDED t", []string{"t"}, "EXTENDED", nil},
		{"DESC TABLE formatted t", []string{"t"}, "FORMATTED", nil},
		// A table named extended: no name follows.
		{"DESC extended", []string{"extended"}, "", nil},
		{"DESC t col", []string{"t"}, "", []string{"col"}},
		{"DESC FORMATTED t `a.b`", []string{"t"}, "FORMATTED", []string{"a.b"}},
		{"DESC EXTENDED db.t t.col", []string{"db", "t"}, "EXTENDED", []string{"t", "col"}},
		{"DESC t col.x", []string{"t"}, "", []string{"col", "x"}},
	}
	for _, c := range cases {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		d, ok := st.(*Describe)
		if !ok {
			t.Fatalf("%s: %T, want *Describe", c.src, st)
		}
		if !reflect.DeepEqual(names(d.Name), c.table) || d.Option != c.option || !reflect.DeepEqual(names(d.Column), c.column) {
			t.Errorf("%s: table %v option %q column %v, want %v %q %v", c.src, names(d.Name), d.Option, names(d.Column), c.table, c.option, c.column)
		}
		// Formatting and parsing again keeps the statement.
		back, err := Parse(Format(st))
		if err != nil {
			t.Fatalf("%s: formatted %q: %v", c.src, Format(st), err)
		}
		if b, ok := back.(*Describe); !ok || !reflect.DeepEqual(names(b.Name), c.table) || b.Option != c.option || !reflect.DeepEqual(names(b.Column), c.column) {
			t.Errorf("%s: formatted %q parses as %#v", c.src, Format(st), back)
		}
	}
}
