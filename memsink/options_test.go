package memsink

import (
	"strings"
	"testing"
)

// TestTableOptionsStrict: known keys apply, writer keys pass, unknown keys
// are errors with a "did you mean" hint.
func TestTableOptionsStrict(t *testing.T) {
	o, err := tableOptions(Options{}, "t", map[string]string{"persist": "true", "maxepochs": "3", "offHeap": "true", "checkpointLocation": "/x", "outputmode": "complete", "continuous.pollinterval": "5 ms",
		"statestore.pebble.localdir": "/y", "spark.sql.ansi.enabled": "false"})
	if err != nil || !o.Persist || o.MaxEpochs != 3 || !o.OffHeap {
		t.Fatalf("known keys: %+v, %v", o, err)
	}
	for key, want := range map[string]string{
		"outputmod": "unknown option 'outputmod' of streaming table t (did you mean 'outputMode'?)",
		"persits":   "(did you mean 'persist'?)",
		"colour":    "unknown option 'colour' of streaming table t (known: persist, updateAsView, maxEpochs, maxRows, maxBytes, offHeap, outputMode, trigger, checkpointLocation, ",
	} {
		_, err := tableOptions(Options{}, "t", map[string]string{key: "x"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", key, err, want)
		}
	}
	// The list names every writer key the engine reads (the engine's own
	// list grows: restart policy, state store settings).
	_, err = tableOptions(Options{}, "t", map[string]string{"colour": "x"})
	for _, k := range []string{"stateStore.provider", "spark.sql.session.timeZone", "restartPolicy", "stateStore.pebble.localDir"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("colour: the known keys in %v do not name %s", err, k)
		}
	}
}
