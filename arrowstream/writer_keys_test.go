package arrowstream

import (
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
)

// TestWriterOptionKeysCoverEngineSettings: every setting a streaming
// table's TBLPROPERTIES may carry for the engine (state store settings,
// the per-table SQL settings) is a known writer option, so a sink that
// rejects unknown options (memsink) does not refuse it.
func TestWriterOptionKeysCoverEngineSettings(t *testing.T) {
	keys := stream.WriterOptionKeys()
	want := append([]string{ConfStateStoreProvider, plan.ConfANSI, plan.ConfTimeZone}, stream.StateTuningKeys()...)
	for _, k := range want {
		if _, ok := stateConfKey(k); !ok && k != plan.ConfANSI && k != plan.ConfTimeZone {
			t.Errorf("%s is not read by the writer as a state setting", k)
		}
		if !slices.Contains(keys, k) {
			t.Errorf("stream.WriterOptionKeys() lacks %s", k)
		}
	}
}
