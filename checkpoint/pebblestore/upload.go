package pebblestore

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// cleanupEvery: old versions are deleted every this many commits (listing
// the checkpoint directory each epoch would cost more than it frees).
const cleanupEvery = 10

// commit applies an epoch's batch and makes version+1 durable: write
// batch, flush the memtable, Pebble checkpoint into a scratch directory
// (hard links), copy the files the checkpoint lacks, write the manifest,
// and now and then delete old versions. Called with p.mu held.
func (p *Partition) commit(batch *pebble.Batch, version, numKeys int64) (int64, error) {
	next := version + 1
	metrics := map[string]int64{}
	phase := func(name string, start time.Time) time.Time {
		now := time.Now()
		metrics[name] = now.Sub(start).Microseconds()
		return now
	}
	t := time.Now()
	empty := batch.Empty()
	changelog := p.prov.opts.ChangelogCheckpointing && next%int64(p.prov.opts.MinDeltasForSnapshot) != 0
	var repr []byte
	if changelog {
		repr = bytes.Clone(batch.Repr())
	}
	err := batch.Commit(pebble.NoSync)
	batch.Close()
	if err != nil {
		return 0, fmt.Errorf("pebblestore: write batch of version %d to %s: %w", next, p.local, err)
	}
	t = phase("pebbleCommitWriteBatchLatencyMicros", t)
	if changelog {
		if err := p.writeChangelog(next, numKeys, repr, metrics); err != nil {
			return 0, err
		}
		t = phase("pebbleCommitFileSyncLatencyMicros", t)
		p.version, p.numKeys = next, numKeys
		p.snapshotCurrent = p.snapshotCurrent && empty
		p.maybeCleanup(next)
		phase("pebbleCommitCleanupLatencyMicros", t)
		p.metrics = metrics
		return next, nil
	}
	m := &manifest{Format: manifestFormat, Version: next, NumKeys: numKeys}
	if empty && p.snapshotCurrent {
		// Nothing changed: the files of the previous version describe
		// this one too.
		if last := p.lastManifest; last != nil {
			m.Files, m.Meta = last.Files, last.Meta
		}
		metrics["pebbleCommitFlushLatencyMicros"] = 0
		metrics["pebbleCommitCheckpointLatencyMicros"] = 0
	} else {
		if err := p.db.Flush(); err != nil {
			return 0, fmt.Errorf("pebblestore: flush version %d of %s: %w", next, p.local, err)
		}
		t = phase("pebbleCommitFlushLatencyMicros", t)
		scratch := p.local + ".ckpt"
		if err := os.RemoveAll(scratch); err != nil {
			return 0, fmt.Errorf("pebblestore: clear %s: %w", scratch, err)
		}
		if err := p.db.Checkpoint(scratch); err != nil {
			return 0, fmt.Errorf("pebblestore: checkpoint version %d of %s: %w", next, p.local, err)
		}
		t = phase("pebbleCommitCheckpointLatencyMicros", t)
		err := p.upload(scratch, m, metrics)
		os.RemoveAll(scratch)
		if err != nil {
			return 0, err
		}
	}
	raw, err := encodeManifest(m)
	if err != nil {
		return 0, fmt.Errorf("pebblestore: encode manifest of version %d: %w", next, err)
	}
	// A re-run epoch rewrites its version: overwrite.
	if err := p.prov.opts.Writer.WriteFile(p.manifestPath(next), raw, true); err != nil {
		return 0, err
	}
	metrics["pebbleCheckpointBytesWritten"] += int64(len(raw))
	t = phase("pebbleCommitFileSyncLatencyMicros", t)
	p.version, p.numKeys, p.lastManifest, p.snapshotCurrent = next, numKeys, m, true
	p.referenced[next] = remoteNames(m)
	p.maybeCleanup(next)
	phase("pebbleCommitCleanupLatencyMicros", t)
	var sstBytes int64
	for _, f := range m.Files {
		sstBytes += f.Size
	}
	metrics["pebbleSstFileCount"] = int64(len(m.Files))
	metrics["pebbleSstFileBytes"] = sstBytes
	p.metrics = metrics
	return next, nil
}

// maybeCleanup deletes old versions every cleanupEvery commits.
func (p *Partition) maybeCleanup(latest int64) {
	if latest%cleanupEvery != 0 {
		return
	}
	if err := p.cleanup(latest); err != nil {
		// Old files are only wasted space: the version is committed.
		p.prov.opts.Logger.Warn("pebblestore: cleanup of old state versions failed", "dir", p.dir, "err", err)
	}
}

// upload copies the shared files of a Pebble checkpoint that the
// partition's checkpoint directory does not hold yet, and inlines the
// small ones in m.
func (p *Partition) upload(scratch string, m *manifest, metrics map[string]int64) error {
	ents, err := os.ReadDir(scratch)
	if err != nil {
		return fmt.Errorf("pebblestore: list %s: %w", scratch, err)
	}
	sync := !p.prov.opts.Writer.NoSync
	uploaded := make(map[string]remoteFile, len(ents))
	copied := false
	for _, e := range ents {
		name := e.Name()
		src := filepath.Join(scratch, name)
		if !shared(name) {
			data, err := os.ReadFile(src)
			if err != nil {
				return fmt.Errorf("pebblestore: read %s: %w", src, err)
			}
			m.Meta = append(m.Meta, metaFile{Name: name, Data: data})
			metrics["pebbleCheckpointBytesWritten"] += int64(len(data))
			continue
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("pebblestore: stat %s: %w", src, err)
		}
		rf, ok := p.uploaded[name]
		if !ok || rf.size != info.Size() {
			var suffix [8]byte
			if _, err := rand.Read(suffix[:]); err != nil {
				return fmt.Errorf("pebblestore: name for %s: %w", src, err)
			}
			ext := filepath.Ext(name)
			rf = remoteFile{name: strings.TrimSuffix(name, ext) + "-" + hex.EncodeToString(suffix[:]) + ext, size: info.Size()}
			dst := filepath.Join(p.dir, sstDir, rf.name)
			if hook := p.prov.opts.UploadHook; hook != nil {
				if err := hook(dst); err != nil {
					return fmt.Errorf("pebblestore: upload %s aborted: %w", dst, err)
				}
			}
			if err := linkOrCopy(src, dst, sync); err != nil {
				return fmt.Errorf("pebblestore: upload version %d: %w", m.Version, err)
			}
			copied = true
			metrics["pebbleFilesCopied"]++
			metrics["pebbleBytesCopied"] += rf.size
			metrics["pebbleCheckpointBytesWritten"] += rf.size
		} else {
			metrics["pebbleFilesReused"]++
		}
		uploaded[name] = rf
		m.Files = append(m.Files, fileEntry{Name: name, Remote: rf.name, Size: rf.size})
	}
	if copied && sync {
		if err := syncDir(filepath.Join(p.dir, sstDir)); err != nil {
			return err
		}
	}
	p.uploaded = uploaded
	return nil
}

// shared reports whether a Pebble file is immutable once written (SST and
// blob files), so that versions can share one copy.
func shared(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// linkOrCopy makes dst a hard link to src, or a copy when the file system
// refuses links (another device); copies are fsynced when sync is set.
// Linking is safe because Pebble never rewrites a file it has written.
func linkOrCopy(src, dst string, sync bool) error {
	if err := os.Link(src, dst); err == nil {
		if sync {
			// Pebble's working directory does not fsync (noSyncFS).
			return syncFile(dst)
		}
		return nil
	} else if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("link %s to %s: %w", src, dst, err)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// checkpoint's temp name: the query's sweep of stale temp files
	// (checkpoint.RemoveStaleTemps) knows it, and skips this process's.
	tmp, err := checkpoint.TempPath(dst)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("pebblestore: open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("pebblestore: fsync directory %s: %w", dir, err)
	}
	return nil
}

// cleanup deletes what rebuilding the retained versions does not need:
// manifests older than the newest snapshot at or below the oldest retained
// version (with changelogs, that snapshot plus the changelogs after it
// rebuild it), changelogs up to that snapshot, then every SST file that no
// remaining manifest names. Files of versions newer than latest (left by an
// epoch that crashed before its commit was recorded) are kept: the re-run
// overwrites them.
func (p *Partition) cleanup(latest int64) error {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return fmt.Errorf("pebblestore: list %s: %w", p.dir, err)
	}
	oldest := latest - int64(p.prov.opts.MinVersionsToRetain) + 1
	keepFrom := int64(0)
	for _, e := range ents {
		if v, ok := parseManifestName(e.Name()); ok && v <= oldest && v > keepFrom {
			keepFrom = v
		}
	}
	if err := p.removeChangelogs(ents, keepFrom); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, e := range ents {
		v, ok := parseManifestName(e.Name())
		if !ok {
			continue
		}
		if v < keepFrom {
			if err := os.Remove(p.manifestPath(v)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("pebblestore: delete old manifest: %w", err)
			}
			delete(p.referenced, v)
			continue
		}
		names, ok := p.referenced[v]
		if !ok {
			m, err := p.readManifest(v)
			if err != nil {
				// Unknown references: delete no SST file.
				return err
			}
			names = remoteNames(m)
		}
		for _, n := range names {
			keep[n] = true
		}
	}
	for _, rf := range p.uploaded {
		keep[rf.name] = true
	}
	files, err := os.ReadDir(filepath.Join(p.dir, sstDir))
	if err != nil {
		return fmt.Errorf("pebblestore: list %s: %w", filepath.Join(p.dir, sstDir), err)
	}
	for _, f := range files {
		if !keep[f.Name()] {
			if err := os.Remove(filepath.Join(p.dir, sstDir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("pebblestore: delete unreferenced file: %w", err)
			}
		}
	}
	return nil
}
