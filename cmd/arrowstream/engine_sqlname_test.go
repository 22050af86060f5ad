package main

import (
	"testing"

	"github.com/arrowstream/arrowstream/sql"
)

// TestQuoteIdentRoundTrips: a name rendered by quoteIdent (the banner's
// example query) parses back to one table reference of exactly that name,
// whatever it contains.
func TestQuoteIdentRoundTrips(t *testing.T) {
	for _, name := range []string{"page_views", "Views", "a b", "x; DROP TABLE y", "q\"uo'te", "back`tick``", "1t", "select", "--c"} {
		text := "SELECT * FROM " + quoteIdent(name) + " LIMIT 10"
		st, err := sql.Parse(text)
		if err != nil {
			t.Errorf("%q: %s: %v", name, text, err)
			continue
		}
		q, ok := st.(*sql.Query)
		if !ok {
			t.Errorf("%q: %s parsed as %T", name, text, st)
			continue
		}
		sel, ok := q.Body.(*sql.Select)
		if !ok || len(sel.From) != 1 {
			t.Errorf("%q: %s: not one FROM item", name, text)
			continue
		}
		ref, ok := sel.From[0].(*sql.TableRef)
		if !ok || len(ref.Name) != 1 || ref.Name[0].Name != name {
			t.Errorf("%q: %s: table reference %#v", name, text, sel.From[0])
		}
	}
}
