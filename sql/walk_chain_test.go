package sql

import (
	"strings"
	"testing"
)

// TestInspectChainOrder: a left-deep operator chain, walked in a loop, is
// visited in the same pre-order as by recursion, and a false from f skips
// exactly the subtree below that node.
func TestInspectChainOrder(t *testing.T) {
	e, err := ParseExpr("a + b * c - d || e AND f OR g")
	if err != nil {
		t.Fatal(err)
	}
	visit := func(skip string) string {
		var got []string
		Inspect(e, func(n Node) bool {
			switch x := n.(type) {
			case *BinaryExpr:
				got = append(got, x.Op.String())
				return x.Op.String() != skip
			case *ColumnRef:
				got = append(got, x.Parts[len(x.Parts)-1].Name)
			}
			return true
		})
		return strings.Join(got, " ")
	}
	// ((((a + (b * c)) - d) || e) AND f) OR g
	if got, want := visit(""), "OR AND || - + a * b c d e f g"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if got, want := visit("-"), "OR AND || - e f g"; got != want {
		t.Errorf("skipping below -: %q, want %q", got, want)
	}
	if got, want := visit("*"), "OR AND || - + a * d e f g"; got != want {
		t.Errorf("skipping below *: %q, want %q", got, want)
	}
}
