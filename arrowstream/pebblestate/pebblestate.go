package pebblestate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/checkpoint/pebblestore"
)

// Name is the provider's name in the setting stream.ConfStateStoreProvider.
const Name = "pebble"

// Registrar is where a program registers state store providers
// (arrowstream.Session implements it).
type Registrar interface {
	RegisterStateStoreProvider(name string, open func(conf map[string]string, w *checkpoint.Writer, mem memory.Allocator) (checkpoint.StateStoreProvider, error))
}

// Register makes the "pebble" state store provider available to r's
// queries.
func Register(r Registrar) {
	r.RegisterStateStoreProvider(Name, func(conf map[string]string, w *checkpoint.Writer, _ memory.Allocator) (checkpoint.StateStoreProvider, error) {
		return New(conf, w, nil)
	})
}

// New builds a Pebble provider from a query's effective settings (the
// stream.ConfPebble* keys). uploadHook is a fault-injection hook (nil in
// production).
func New(conf map[string]string, w *checkpoint.Writer, uploadHook func(string) error) (checkpoint.StateStoreProvider, error) {
	cache, err := confBytes(conf, stream.ConfPebbleBlockCacheBytes)
	if err != nil {
		return nil, err
	}
	memtable, err := confBytes(conf, stream.ConfPebbleMemtableBytes)
	if err != nil {
		return nil, err
	}
	if memtable != 0 && memtable < 64<<10 {
		return nil, fmt.Errorf("arrowstream: option %s = %d: must be at least 65536", stream.ConfPebbleMemtableBytes, memtable)
	}
	// Changelog checkpointing by default (Spark's RocksDB provider defaults
	// to off): an epoch writes only its batch into the state log, and every
	// minDeltasForSnapshot-th version flushes and copies SST files. Without
	// it every epoch flushes the memtable and copies a small SST file and a
	// manifest per changed partition: about 60 times slower per epoch on the
	// chaos memsink workload (docs/operations.md). A checkpoint written
	// either way restores either way.
	changelog := true
	if v, ok := conf[stream.ConfPebbleChangelog]; ok && v != "" {
		if changelog, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return nil, fmt.Errorf("arrowstream: option %s = %q: want true or false", stream.ConfPebbleChangelog, v)
		}
	}
	deltas, err := confBytes(conf, stream.ConfPebbleMinDeltasForSnapshot)
	if err != nil {
		return nil, err
	}
	prov, err := pebblestore.NewProvider(pebblestore.Options{
		Writer: w, LocalDir: conf[stream.ConfPebbleLocalDir], BlockCacheBytes: cache, MemtableBytes: memtable,
		MinVersionsToRetain:    minBatchesToRetain(conf),
		ChangelogCheckpointing: changelog, MinDeltasForSnapshot: int(deltas),
		UploadHook: uploadHook,
	})
	if err != nil {
		return nil, err
	}
	return prov, nil
}

// minBatchesToRetain is the query's spark.sql.streaming.minBatchesToRetain
// (default 100): the state versions a provider keeps.
func minBatchesToRetain(conf map[string]string) int {
	if v, ok := conf["spark.sql.streaming.minBatchesToRetain"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return 100
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
