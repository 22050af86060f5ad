package console

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestSinkOptionKeysAreTheParsersKeys ties the declared sink option keys
// (which the session checks writer options and TBLPROPERTIES against) to
// the keys newSink reads.
func TestSinkOptionKeysAreTheParsersKeys(t *testing.T) {
	if got, want := testutil.OptionKeysRead(t, "console.go", "newSink"), testutil.LowerSorted(OptionKeys()); !slices.Equal(got, want) {
		t.Errorf("newSink reads %v, declared %v", got, want)
	}
}
