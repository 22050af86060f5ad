package kafka

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestSourceOptionKeysAreTheParsersKeys ties the declared option keys
// (which the session checks OPTIONS against) to the keys
// ParseSourceOptions reads, the refused consumer settings included.
func TestSourceOptionKeysAreTheParsersKeys(t *testing.T) {
	read := testutil.OptionKeysRead(t, "options.go", "ParseSourceOptions")
	for _, name := range unsupportedConsumerOptions {
		read = append(read, "kafka."+name) // read as "kafka."+name
	}
	if got, want := testutil.LowerSorted(read), testutil.LowerSorted(SourceOptionKeys()); !slices.Equal(got, want) {
		t.Errorf("ParseSourceOptions reads %v, declared %v", got, want)
	}
}
