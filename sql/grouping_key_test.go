package sql

import (
	"strings"
	"testing"
)

// TestGroupingSetsSemanticEquality: grouping sets whose expressions differ
// only in the order of a commutative operator's operands (or > written as
// <) group by one expression, as Spark's semantic equality has it; others
// stay apart.
func TestGroupingSetsSemanticEquality(t *testing.T) {
	for _, c := range []struct {
		src  string
		keys int // distinct grouping expressions
	}{
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a + b), (b + a), (b))", 2},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a + b + c), (c + (b + a)))", 1},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a * 2), (2 * a))", 1},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a > b), (b < a), (a >= b), (b <= a))", 2},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a = b AND c), (c AND b = a))", 1},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a - b), (b - a))", 2},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a / b), (b / a), (a < b), (b > a), (a > b))", 4},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a + b * c), (c * b + a), (a * c + b))", 2},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS (((a = b) = c), (c = (b = a)), (a = (b = c)))", 2},
		// Identifiers fold case; string literals do not.
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((concat(a, 'A')), (CONCAT(A, 'a')), (concat(a, 'a')))", 2},
		{"SELECT 1 FROM t GROUP BY GROUPING SETS ((a = 'X'), (A = 'x'), (a), (A))", 3},
		{"SELECT 1 FROM t GROUP BY CUBE (upper(a), UPPER(A), lower('It''S'), lower('it''s'))", 3},
	} {
		st, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := len(st.(*Query).Body.(*Select).GroupBy); got != c.keys {
			t.Errorf("%s: %d grouping expressions, want %d", c.src, got, c.keys)
		}
	}
	// A plain GROUP BY keeps each expression as written.
	st, err := Parse("SELECT 1 FROM t GROUP BY a + b, b + a")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(st.(*Query).Body.(*Select).GroupBy); got != 2 {
		t.Errorf("plain GROUP BY: %d expressions, want 2", got)
	}
}

// TestRollupCubeEmptySetRefused: () inside ROLLUP or CUBE is a parse
// error in Spark (it is allowed in GROUPING SETS).
func TestRollupCubeEmptySetRefused(t *testing.T) {
	for _, src := range []string{
		"SELECT 1 FROM t GROUP BY ROLLUP(a, b, (a, b), ())",
		"SELECT 1 FROM t GROUP BY CUBE((), a)",
		"SELECT 1 FROM t GROUP BY ROLLUP()",
		"SELECT 1 FROM t GROUP BY x, cube(())",
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "Empty set in") {
			t.Errorf("%s: %v, want the empty-set error", src, err)
		}
	}
	if _, err := Parse("SELECT 1 FROM t GROUP BY GROUPING SETS ((a), ())"); err != nil {
		t.Errorf("GROUPING SETS with (): %v", err)
	}
}
