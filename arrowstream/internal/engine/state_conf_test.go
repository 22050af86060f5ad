package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

func TestCheckStateProvider(t *testing.T) {
	withState := t.TempDir()
	if err := os.Mkdir(filepath.Join(withState, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir                 string
		recorded, requested string
		refused             bool
	}{
		{withState, "", "", false},
		{withState, "", "memory", false},
		{withState, "", "pebble", true}, // an old checkpoint holds memory state
		{withState, "pebble", "", false},
		{withState, "pebble", "PEBBLE", false},
		{withState, "pebble", "memory", true},
		{t.TempDir(), "pebble", "memory", false}, // no state to misread
	}
	for _, tc := range tests {
		err := checkStateProvider(tc.dir, tc.recorded, tc.requested)
		if (err != nil) != tc.refused {
			t.Errorf("recorded %q requested %q: %v, refused want %v", tc.recorded, tc.requested, err, tc.refused)
		}
	}
}

func TestKeepStateTuning(t *testing.T) {
	conf := map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleBlockCacheBytes: "1000", stream.ConfPebbleMemtableBytes: "2000"}
	keepStateTuning(conf, map[string]string{stream.ConfStateStoreProvider: "memory", stream.ConfPebbleBlockCacheBytes: "5000"})
	want := map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleBlockCacheBytes: "5000", stream.ConfPebbleMemtableBytes: "2000"}
	for k, v := range want {
		if conf[k] != v {
			t.Errorf("%s = %q, want %q", k, conf[k], v)
		}
	}
}
