package pebblestore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Partition is one state partition in its own Pebble instance.
type Partition struct {
	prov *Provider
	// reserve reserves its stores' epoch batches on the operator's
	// account (SetEpochBufferReserver; nil: none). Set before a store
	// begins, read under mu.
	reserve func(n int64) error
	dir     string // the partition's checkpoint directory
	local   string // the working Pebble directory

	mu      sync.Mutex
	db      *pebble.DB
	version int64 // version the db holds, -1 when none is loaded
	numKeys int64 // live keys of version
	busy    bool
	// uploaded maps a local file name to its copy in the checkpoint, for
	// the files of the loaded lineage: a file is copied once.
	uploaded map[string]remoteFile
	// lastManifest is the manifest of version, reused as is when an
	// epoch changes nothing.
	lastManifest *manifest
	// snapshotCurrent: lastManifest describes version (no changelog was
	// applied or written after it), so an epoch without updates can reuse
	// its files.
	snapshotCurrent bool
	// referenced caches the checkpoint SST names of manifests read or
	// written, by version, for cleanup.
	referenced map[int64][]string
	metrics    map[string]int64
	loadMicros int64
	// glog, when set, is the provider's state log (group commit): the
	// changelogs of the versions it covers are there, under rel.
	glog *checkpoint.StateLog
	rel  string
}

func openPartition(p *Provider, dir string, seq int) (*Partition, error) {
	if err := p.opts.Writer.MkdirAll(filepath.Join(dir, sstDir)); err != nil {
		return nil, err
	}
	local := filepath.Join(dir, "_local")
	if p.opts.LocalDir != "" {
		var suffix [6]byte
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, fmt.Errorf("pebblestore: local directory name for %s: %w", dir, err)
		}
		local = filepath.Join(p.opts.LocalDir, strconv.Itoa(seq)+"-"+hex.EncodeToString(suffix[:]))
	}
	return &Partition{prov: p, dir: dir, local: local, version: -1, referenced: map[int64][]string{}}, nil
}

// Begin implements checkpoint.StatePartition.
func (p *Partition) Begin(version int64) (checkpoint.StateStore, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		return nil, fmt.Errorf("pebblestore: state %s: a store is already open", p.dir)
	}
	if version < 0 {
		return nil, fmt.Errorf("pebblestore: state %s: negative version %d", p.dir, version)
	}
	if p.version != version || p.db == nil {
		start := time.Now()
		if err := p.restore(version); err != nil {
			p.version = -1
			return nil, err
		}
		p.loadMicros = time.Since(start).Microseconds()
	}
	p.busy = true
	st := &store{p: p, version: version, batch: p.db.NewIndexedBatch(), numKeys: p.numKeys, exists: map[string]bool{}}
	st.acct.reserve = p.reserve
	return st, nil
}

// restore rebuilds the working directory at version from the checkpoint.
func (p *Partition) restore(version int64) error {
	if p.db != nil {
		if err := p.db.Close(); err != nil {
			return fmt.Errorf("pebblestore: close %s: %w", p.local, err)
		}
		p.db = nil
	}
	if err := os.RemoveAll(p.local); err != nil {
		return fmt.Errorf("pebblestore: clear working directory %s: %w", p.local, err)
	}
	if err := os.MkdirAll(p.local, 0o755); err != nil {
		return fmt.Errorf("pebblestore: create working directory %s: %w", p.local, err)
	}
	p.uploaded = map[string]remoteFile{}
	p.lastManifest = nil
	p.numKeys = 0
	base, err := p.snapshotBase(version)
	if err != nil {
		return err
	}
	if base > 0 {
		m, err := p.readManifest(base)
		if err != nil {
			return err
		}
		for _, f := range m.Files {
			if err := linkOrCopy(filepath.Join(p.dir, sstDir, f.Remote), filepath.Join(p.local, f.Name), false); err != nil {
				return fmt.Errorf("pebblestore: restore version %d of %s: %w", version, p.dir, err)
			}
			p.uploaded[f.Name] = remoteFile{name: f.Remote, size: f.Size}
		}
		for _, f := range m.Meta {
			if err := os.WriteFile(filepath.Join(p.local, f.Name), f.Data, 0o644); err != nil {
				return fmt.Errorf("pebblestore: restore version %d of %s: %w", version, p.dir, err)
			}
		}
		p.numKeys = m.NumKeys
		p.lastManifest = m
	}
	db, err := pebble.Open(p.local, p.pebbleOptions())
	if err != nil {
		return fmt.Errorf("pebblestore: open version %d of %s: %w", version, p.dir, err)
	}
	p.db = db
	applied := false
	for v := base + 1; v <= version; v++ {
		if p.glog != nil && p.glog.Covers(v) {
			raw, ok, err := p.glog.Read(p.rel, v)
			if err != nil {
				return fmt.Errorf("pebblestore: cannot load version %d of %s: %w", version, p.dir, err)
			}
			if !ok {
				continue // unchanged in v
			}
			if p.numKeys, err = p.applyChangelogBytes(v, raw, p.glog.Where(p.rel, v)); err != nil {
				return err
			}
			applied = true
			continue
		}
		if p.numKeys, err = p.applyChangelog(v); err != nil {
			return err
		}
		applied = true
	}
	p.version, p.snapshotCurrent = version, !applied
	return nil
}

func (p *Partition) pebbleOptions() *pebble.Options {
	o := &pebble.Options{
		FS:           noSyncFS{vfs.Default},
		Cache:        p.prov.cache,
		MemTableSize: uint64(p.prov.opts.MemtableBytes),
		// Durability comes from the checkpoint: every commit flushes the
		// memtable and copies the SST files, so a WAL would only be
		// written twice.
		DisableWAL: true,
		// Pebble's MANIFEST is copied whole into every version manifest:
		// rotate it early so that stays small.
		MaxManifestFileSize: 64 << 10,
		Logger:              pebbleLogger{p.prov.opts.Logger},
		// One background compaction per instance: the engine's own work
		// runs on the same cores.
		CompactionConcurrencyRange: func() (int, int) { return 1, 1 },
	}
	// Operators read a key before writing it, and most reads of new keys
	// miss: Bloom filters answer those without reading data blocks.
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return o
}

// MemoryBytes implements checkpoint.StatePartition: the memtables of the
// partition (the block cache is the provider's).
func (p *Partition) MemoryBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return 0
	}
	return int64(p.db.Metrics().MemTable.Size)
}

// Metrics implements checkpoint.StatePartition: the figures of the last
// commit.
func (p *Partition) Metrics() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.metrics == nil {
		return nil
	}
	out := make(map[string]int64, len(p.metrics)+1)
	for k, v := range p.metrics {
		out[k] = v
	}
	out["pebbleLoadLatencyMicros"] = p.loadMicros
	return out
}

// Close implements checkpoint.StatePartition: the Pebble instance is
// closed and its working directory removed; the checkpoint stays.
func (p *Partition) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	if p.db != nil {
		if err := p.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("pebblestore: close %s: %w", p.local, err))
		}
		p.db = nil
	}
	p.version = -1
	if err := os.RemoveAll(p.local); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
