package rate

import (
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestOptionKeysAreTheParsersKeys ties the declared option keys (which
// the session checks OPTIONS against) to the keys the parsers read.
func TestOptionKeysAreTheParsersKeys(t *testing.T) {
	for _, tc := range []struct {
		file, fn string
		keys     []string
		parse    func(map[string]string) error
	}{
		{"rate_source.go", "ParseRateOptions", RateOptionKeys(), func(o map[string]string) error { _, err := ParseRateOptions(o); return err }},
		{"rate_micro_batch.go", "ParseRateMicroBatchOptions", RateMicroBatchOptionKeys(), func(o map[string]string) error { _, err := ParseRateMicroBatchOptions(o); return err }},
	} {
		if got, want := testutil.OptionKeysRead(t, tc.file, tc.fn), testutil.LowerSorted(tc.keys); !slices.Equal(got, want) {
			t.Errorf("%s reads %v, declared %v", tc.fn, got, want)
		}
		for _, k := range tc.keys {
			if err := tc.parse(map[string]string{k: "1"}); err != nil && strings.Contains(err.Error(), "unknown") {
				t.Errorf("%s: declared key %s is unknown to the parser: %v", tc.fn, k, err)
			}
		}
		if err := tc.parse(map[string]string{"colour": "1"}); err == nil || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("%s accepts an unknown key: %v", tc.fn, err)
		}
	}
}
