package plan

import "testing"

func TestClosestName(t *testing.T) {
	keys := []string{"outputMode", "trigger", "checkpointLocation", "persist", "maxEpochs"}
	for name, want := range map[string]string{
		"outputmod": "outputMode", "OUTPUTMODE": "outputMode", "triger": "trigger",
		"persits": "persist", "colour": "", "maxepoch": "maxEpochs", "": "",
	} {
		if got := ClosestName(name, keys); got != want {
			t.Errorf("ClosestName(%q) = %q, want %q", name, got, want)
		}
	}
	if got := DidYouMean("colour", []string{"a", "b"}); got != " (known: a, b)" {
		t.Errorf("DidYouMean: %q", got)
	}
}

// TestEditDistance checks the edit distance against known values.
func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
		if got := editDistance(tc.b, tc.a); got != tc.d {
			t.Errorf("editDistance not symmetric for %q, %q", tc.a, tc.b)
		}
	}
}
