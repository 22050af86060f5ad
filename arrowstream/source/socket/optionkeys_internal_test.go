package socket

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestOptionKeysAreTheParsersKeys ties the declared option keys (which
// the session checks OPTIONS against) to the keys ParseOptions reads.
func TestOptionKeysAreTheParsersKeys(t *testing.T) {
	if got, want := testutil.OptionKeysRead(t, "options.go", "ParseOptions"), testutil.LowerSorted(OptionKeys()); !slices.Equal(got, want) {
		t.Errorf("ParseOptions reads %v, declared %v", got, want)
	}
}
