package files

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestSinkOptionKeysAreTheParsersKeys ties the declared sink option keys
// (which the session checks writer options and TBLPROPERTIES against) to
// the keys ParseSinkOptions reads.
func TestSinkOptionKeysAreTheParsersKeys(t *testing.T) {
	if got, want := testutil.OptionKeysRead(t, "sink.go", "ParseSinkOptions"), testutil.LowerSorted(SinkOptionKeys()); !slices.Equal(got, want) {
		t.Errorf("ParseSinkOptions reads %v, declared %v", got, want)
	}
}
