package sql

import (
	"errors"
	"strings"
	"testing"
)

// exprNodes counts the expression nodes of st as checkExprNodes does (the
// brute-force model of the limit).
func exprNodes(st Statement) int {
	n := 0
	Inspect(st, func(x Node) bool {
		if _, ok := x.(Expr); ok {
			n++
		}
		return true
	})
	return n
}

func TestParseWithLimits(t *testing.T) {
	sum := func(n int) string { return "SELECT " + strings.TrimSuffix(strings.Repeat("1+", n), "+") }
	tests := []struct {
		name  string
		src   string
		lim   Limits
		limit string // "" when it must parse
	}{
		{"default fits", sum(1000), Limits{}, ""},
		{"bytes over", "SELECT 1 + 2", Limits{MaxStatementBytes: 5}, "MaxStatementBytes"},
		{"bytes exact", "SELECT 1", Limits{MaxStatementBytes: 8}, ""},
		{"bytes unlimited", sum(600_000), Limits{MaxStatementBytes: -1, MaxExprNodes: -1}, ""},
		{"default bytes", sum(600_000), Limits{}, "MaxStatementBytes"},
		{"nodes exact", "SELECT 1 + 2", Limits{MaxExprNodes: 3}, ""},
		{"nodes over", "SELECT 1 + 2", Limits{MaxExprNodes: 2}, "MaxExprNodes"},
		{"default nodes", sum(60_000), Limits{}, "MaxExprNodes"},
		{"nodes in CASE", "SELECT CASE WHEN a = 1 THEN 2 WHEN a = 3 THEN 4 END FROM t", Limits{MaxExprNodes: 8}, "MaxExprNodes"},
		{"nodes in WHERE", "SELECT a FROM t WHERE b IN (1, 2, 3, 4)", Limits{MaxExprNodes: 5}, "MaxExprNodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ParseWith(tc.src, tc.lim)
			if tc.limit == "" {
				if err != nil {
					t.Fatalf("ParseWith: %v", err)
				}
				if max := tc.lim.withDefaults().MaxExprNodes; max > 0 && exprNodes(st) > max {
					t.Fatalf("parsed %d nodes past the limit %d", exprNodes(st), max)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tc.limit || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want a LimitError for %s", err, tc.limit)
			}
			if !strings.Contains(err.Error(), tc.limit) {
				t.Errorf("error %q does not name the limit", err)
			}
		})
	}
}

// TestParseDeepNesting: 100K nested parentheses (and NOTs, and unary
// minus, and subqueries) are a syntax error, not a stack overflow.
func TestParseDeepNesting(t *testing.T) {
	const deep = 100_000
	for name, src := range map[string]string{
		"parens":     "SELECT " + strings.Repeat("(", deep) + "1" + strings.Repeat(")", deep),
		"not":        "SELECT " + strings.Repeat("NOT ", deep) + "true",
		"minus":      "SELECT " + strings.Repeat("- ", deep) + "1",
		"subqueries": strings.Repeat("SELECT * FROM (", deep) + "SELECT 1" + strings.Repeat(")", deep),
		"case":       "SELECT " + strings.Repeat("CASE WHEN true THEN ", deep) + "1" + strings.Repeat(" END", deep),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseWith(src, Limits{MaxStatementBytes: -1, MaxExprNodes: -1})
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting too deep") {
				t.Fatalf("err = %v, want a nesting error", err)
			}
		})
	}
}

// FuzzParseWithLimits checks that no input under small limits panics, that
// a refusal is a *LimitError or *SyntaxError, and that whatever parses
// holds no more expression nodes than the limit.
func FuzzParseWithLimits(f *testing.F) {
	f.Add("SELECT 1+1+1+1", 64, 3)
	f.Add("SELECT CASE WHEN a THEN b ELSE c END FROM t", 10, 100)
	f.Add("SELECT a FROM t WHERE b IN (1,2,3)", 1000, 5)
	f.Add("SELECT ((((1))))", 1000, 1)
	f.Fuzz(func(t *testing.T, src string, maxBytes, maxNodes int) {
		lim := Limits{MaxStatementBytes: maxBytes, MaxExprNodes: maxNodes}
		st, err := ParseWith(src, lim)
		if err != nil {
			var le *LimitError
			var se *SyntaxError
			if !errors.As(err, &le) && !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		lim = lim.withDefaults()
		if lim.MaxStatementBytes > 0 && len(src) > lim.MaxStatementBytes {
			t.Fatalf("parsed %d bytes past the limit %d", len(src), lim.MaxStatementBytes)
		}
		if lim.MaxExprNodes > 0 && exprNodes(st) > lim.MaxExprNodes {
			t.Fatalf("parsed %d expression nodes past the limit %d", exprNodes(st), lim.MaxExprNodes)
		}
	})
}
