package server

import "testing"

// TestPlainTableReadRefusesRowClauses: a read each instance can answer over
// its own rows has no clause that counts rows across instances; an OFFSET
// (like a LIMIT) skips rows of the whole result, so it must not be fanned out.
func TestPlainTableReadRefusesRowClauses(t *testing.T) {
	for _, c := range []struct {
		sql   string
		plain bool
	}{
		{"SELECT * FROM t", true},
		{"SELECT a, b FROM t", true},
		{"SELECT * FROM t LIMIT 2", false},
		{"SELECT * FROM t OFFSET 2", false},
		{"SELECT * FROM t LIMIT 2 OFFSET 1", false},
		{"SELECT * FROM t ORDER BY a", false},
	} {
		if _, ok := plainTableRead(c.sql); ok != c.plain {
			t.Errorf("plainTableRead(%q) = %v, want %v", c.sql, ok, c.plain)
		}
	}
}
