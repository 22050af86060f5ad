package arrowstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/checkpoint/pebblestore"
)

// Settings of the state store (session conf or query option; recorded in
// the offset log with the other settings that shape state).
const (
	// ConfStateStoreProvider selects the state store: "memory" (default)
	// or "pebble". A checkpoint keeps the provider it was started with.
	ConfStateStoreProvider = "stateStore.provider"
	// ConfPebbleBlockCacheBytes is the block cache shared by every state
	// partition of a query (pebble provider; default 64 MiB).
	ConfPebbleBlockCacheBytes = "stateStore.pebble.blockCacheBytes"
	// ConfPebbleMemtableBytes is each partition's memtable size (pebble
	// provider; default 4 MiB).
	ConfPebbleMemtableBytes = "stateStore.pebble.memtableBytes"
	// ConfPebbleLocalDir holds the working Pebble directories (pebble
	// provider; default: inside each partition's checkpoint directory).
	ConfPebbleLocalDir = "stateStore.pebble.localDir"
	// ConfPebbleChangelog turns on changelog checkpointing (pebble
	// provider): versions between snapshots write only their changes.
	ConfPebbleChangelog = "stateStore.pebble.changelogCheckpointing"
	// ConfPebbleMinDeltasForSnapshot: with changelog checkpointing, every
	// this-many-th version is a snapshot (default 10).
	ConfPebbleMinDeltasForSnapshot = "stateStore.pebble.minDeltasForSnapshot"
)

// stateTuningKeys are the pebble settings that do not shape the state: a
// restart may change them.
var stateTuningKeys = []string{ConfPebbleBlockCacheBytes, ConfPebbleMemtableBytes, ConfPebbleLocalDir, ConfPebbleChangelog, ConfPebbleMinDeltasForSnapshot}

const defaultStateStoreProvider = "memory"

// stateConfKey returns the canonical key of a query option that is a
// state store setting (matched case-insensitively: SQL table properties
// arrive in lower case); the writer copies those into the query's conf.
func stateConfKey(option string) (string, bool) {
	if strings.EqualFold(option, ConfStateStoreProvider) {
		return ConfStateStoreProvider, true
	}
	for _, k := range stateTuningKeys {
		if strings.EqualFold(option, k) {
			return k, true
		}
	}
	return "", false
}

// newStateProvider builds the provider the query's effective conf selects.
// uploadHook is a fault-injection hook for the pebble provider (nil in
// production).
func newStateProvider(conf map[string]string, w *checkpoint.Writer, mem memory.Allocator, uploadHook func(string) error) (checkpoint.StateStoreProvider, error) {
	name := strings.ToLower(strings.TrimSpace(conf[ConfStateStoreProvider]))
	switch name {
	case "", "memory":
		return checkpoint.NewMemoryProvider(w, checkpoint.StoreOptions{Allocator: mem}), nil
	case "pebble":
		cache, err := confBytes(conf, ConfPebbleBlockCacheBytes)
		if err != nil {
			return nil, err
		}
		memtable, err := confBytes(conf, ConfPebbleMemtableBytes)
		if err != nil {
			return nil, err
		}
		if memtable != 0 && memtable < 64<<10 {
			return nil, fmt.Errorf("arrowstream: option %s = %d: must be at least 65536", ConfPebbleMemtableBytes, memtable)
		}
		changelog := false
		if v, ok := conf[ConfPebbleChangelog]; ok && v != "" {
			if changelog, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("arrowstream: option %s = %q: want true or false", ConfPebbleChangelog, v)
			}
		}
		deltas, err := confBytes(conf, ConfPebbleMinDeltasForSnapshot)
		if err != nil {
			return nil, err
		}
		prov, err := pebblestore.NewProvider(pebblestore.Options{
			Writer: w, LocalDir: conf[ConfPebbleLocalDir], BlockCacheBytes: cache, MemtableBytes: memtable,
			MinVersionsToRetain:    confInt(conf, "spark.sql.streaming.minBatchesToRetain", 100),
			ChangelogCheckpointing: changelog, MinDeltasForSnapshot: int(deltas),
			UploadHook: uploadHook,
		})
		if err != nil {
			return nil, err
		}
		return prov, nil
	}
	return nil, fmt.Errorf("arrowstream: option %s = %q: unknown state store provider (memory or pebble)", ConfStateStoreProvider, conf[ConfStateStoreProvider])
}

// confBytes reads a non-negative byte count; 0 when unset.
func confBytes(conf map[string]string, key string) (int64, error) {
	v, ok := conf[key]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("arrowstream: option %s = %q: want a byte count", key, v)
	}
	return n, nil
}

// keepStateTuning lets the current run's Pebble sizes and working
// directory win over the recorded ones: unlike the provider, they do not
// shape the state.
func keepStateTuning(conf, current map[string]string) {
	for _, k := range stateTuningKeys {
		if v, ok := current[k]; ok {
			conf[k] = v
		}
	}
}

// checkStateProvider compares the provider a restarted query asks for with
// the one its checkpoint was written with: state written by one provider
// cannot be read by the other, so a mismatch is refused instead of
// starting from empty state. recorded is the provider in the offset log
// (absent: an old checkpoint, memory); requested is empty when the query
// does not set one, and then the recorded one is used.
func checkStateProvider(checkpointDir, recorded, requested string) error {
	if recorded == "" {
		recorded = defaultStateStoreProvider
	}
	if requested == "" || strings.EqualFold(recorded, requested) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(checkpointDir, "state")); err != nil {
		return nil // no state: nothing to misread
	}
	return fmt.Errorf("arrowstream: the checkpoint %s holds state written by the %q state store provider but the query sets %s = %q; restart with %s = %q or start on a new checkpoint location",
		checkpointDir, recorded, ConfStateStoreProvider, requested, ConfStateStoreProvider, recorded)
}
