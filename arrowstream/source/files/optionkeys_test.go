package files

import (
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestSourceOptionKeysAreTheParsersKeys ties the declared option keys
// (which the session checks OPTIONS against) to the keys ParseOptions
// reads.
func TestSourceOptionKeysAreTheParsersKeys(t *testing.T) {
	if got, want := testutil.OptionKeysRead(t, "options.go", "ParseOptions"), testutil.LowerSorted(SourceOptionKeys()); !slices.Equal(got, want) {
		t.Errorf("ParseOptions reads %v, declared %v", got, want)
	}
	for _, k := range SourceOptionKeys() {
		if _, err := ParseOptions(CSV, map[string]string{"path": "/tmp", k: "1"}); err != nil && strings.Contains(err.Error(), "unknown option") {
			t.Errorf("declared key %s is unknown to the parser: %v", k, err)
		}
	}
	if _, err := ParseOptions(CSV, map[string]string{"path": "/tmp", "colour": "1"}); err == nil || !strings.Contains(err.Error(), "unknown option") {
		t.Errorf("an unknown key is accepted: %v", err)
	}
}
