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
		err := checkStateProvider(tc.dir, false, tc.recorded, tc.requested)
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

// TestSetStatePartitioning: a new query takes Spark's scheme unless its
// settings name one; a checkpoint that does not record the scheme keeps
// the key-encoder one even when the session asks for Spark's, and one that
// records a scheme keeps it (the recorded conf is merged before).
func TestSetStatePartitioning(t *testing.T) {
	tests := []struct {
		session, recorded string
		restarted         bool
		want              string
	}{
		{"", "", false, stream.PartitioningMurmur3},
		{stream.PartitioningKeyEncoder, "", false, stream.PartitioningKeyEncoder},
		{"", "", true, stream.PartitioningKeyEncoder},
		{stream.PartitioningMurmur3, "", true, stream.PartitioningKeyEncoder},
		{"", stream.PartitioningMurmur3, true, stream.PartitioningMurmur3},
		{stream.PartitioningKeyEncoder, stream.PartitioningMurmur3, true, stream.PartitioningMurmur3},
	}
	for _, tc := range tests {
		conf, recorded := map[string]string{}, map[string]string{}
		if tc.session != "" {
			conf[stream.ConfStatePartitioning] = tc.session
		}
		if tc.recorded != "" {
			recorded[stream.ConfStatePartitioning] = tc.recorded
			conf[stream.ConfStatePartitioning] = tc.recorded // as recovery merges it
		}
		setStatePartitioning(conf, recorded, tc.restarted)
		if got := conf[stream.ConfStatePartitioning]; got != tc.want {
			t.Errorf("session %q recorded %q restarted %v: %q, want %q", tc.session, tc.recorded, tc.restarted, got, tc.want)
		}
	}
}
