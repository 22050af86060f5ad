package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// compactSnapshot writes the full snapshot of version latest of a
// partition that holds no decoded copy (its operator keeps the state
// live): the newest snapshot or segment below it (with its chain) plus
// the deltas after, merged off the epoch's path in background
// maintenance. It costs the state's size; snapshotLive calls it only
// when a segment would not do (statestore_segment.go), which is paid for
// by as many bytes of changes. covered is the delta bytes the snapshot
// makes unnecessary to replay. The caller holds one of the provider's
// compaction slots, which bound how many partitions decode their state at
// once, so that compaction's transient copy is one partition's, not the
// operator's whole state. A snapshot that cannot be built is skipped (it
// is a shortcut; the deltas stay): a damaged base is logged, not fatal.
func (p *StorePartition) compactSnapshot(files map[fileKey]bool, latest, covered int64) error {
	return p.foldSnapshot(files, latest, covered, nil)
}

// foldSnapshot is compactSnapshot; changes, when not nil, are the
// decompressed payloads of the deltas after the newest snapshot or
// segment below latest (deltaPayloads), already read: they are applied
// instead of reading them again.
func (p *StorePartition) foldSnapshot(files map[fileKey]bool, latest, covered int64, changes [][]byte) error {
	// The base is the newest snapshot or segment below latest, read
	// with its chain.
	base := int64(0)
	p.mu.Lock()
	rows := p.rows
	p.mu.Unlock()
	data := foldMap(rows)
	defer releaseFoldMap(data)
	if k, ok := newestBase(files, latest-1); ok {
		base = k.version
		if err := p.readChain(files, k, data, true); err != nil {
			if errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewerFormat) {
				slog.Warn("state snapshot unreadable; compaction skipped", "err", err)
				return nil
			}
			return err
		}
	}
	if changes != nil {
		for _, payload := range changes {
			if err := applyAliased(payload, data); err != nil {
				return fmt.Errorf("checkpoint: compact state %s to version %d: %w", p.dir, latest, err)
			}
		}
		base = latest
	}
	var lr logReader
	defer lr.close()
	for v := base + 1; v <= latest; v++ {
		if p.logged(v) {
			if err := p.applyLoggedAliased(&lr, v, data); err != nil {
				return fmt.Errorf("checkpoint: compact state %s to version %d: %w", p.dir, latest, err)
			}
			continue
		}
		if !files[fileKey{v, "delta"}] {
			return fmt.Errorf("checkpoint: compact state %s to version %d: %s is missing: %w", p.dir, latest, p.file(v, "delta"), ErrCorrupt)
		}
		if err := p.readAliased(p.file(v, "delta"), data); err != nil {
			return err
		}
	}
	var state int64
	for k, v := range data {
		state += int64(len(k) + len(v))
	}
	raw, err := encodeStateMap(data)
	if err != nil {
		return fmt.Errorf("checkpoint: encode snapshot for %s: %w", p.dir, err)
	}
	return p.installSnapshot(files, latest, covered, raw, int64(len(data)), state, func() {
		if p.dataless {
			// The exact size replaces the estimate, plus what was upserted
			// since the compacted version.
			p.estBytes = state + p.sinceSnap
		}
	})
}

// installSnapshot writes raw, the full snapshot of version latest holding
// entries keys and state bytes (putBase: a file, or an entry of the
// operator's pack), and records it as the partition's newest base: in the
// file index, as the start of a new snapshot chain, and by taking covered
// off the delta bytes a load would replay. locked runs under p.mu after
// that, for what only the caller knows to update.
func (p *StorePartition) installSnapshot(files map[fileKey]bool, latest, covered int64, raw []byte, entries, state int64, locked func()) error {
	key := fileKey{latest, "snapshot"}
	return p.putBase(key, raw, func() {
		files[key] = true
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.files != nil {
			p.files[key] = true
			p.noteBases()
		}
		p.sinceSnap = max(p.sinceSnap-covered, 0)
		p.snapBytes = state
		p.chain = snapChain{head: latest, entries: entries, bytes: state}
		if locked != nil {
			locked()
		}
	})
}

// foldMaps recycles the transient maps of foldSnapshot. A fold fills its
// map from empty: growing it (table splits and rehashes, fresh memory
// each time) was a third of a windowed or Nexmark q5 snapshot, whose
// state churns. At most the provider's compaction slots fold at once, so
// the pool holds few maps, and it drops them as any sync.Pool does.
var foldMaps = sync.Pool{}

// foldMap returns an empty map for a fold: a recycled one, or a new one
// with room for rows keys.
func foldMap(rows int64) map[string][]byte {
	if m, ok := foldMaps.Get().(map[string][]byte); ok {
		return m
	}
	return make(map[string][]byte, int(min(max(rows, 0), 1<<20)))
}

// releaseFoldMap empties data (its keys and values alias file bytes that
// must not be kept alive) and recycles it.
func releaseFoldMap(data map[string][]byte) {
	clear(data)
	foldMaps.Put(data)
}

// readAliased applies a delta or snapshot file to compaction's transient
// map: the entries of a v2 file alias the file's bytes (no copy, no
// allocation per entry); older formats are decoded as by readInto.
func (p *StorePartition) readAliased(path string, data map[string][]byte) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	if err := p.decodeAliased(raw, data); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return nil
}

// applyLoggedAliased applies version v's delta from the state log to
// compaction's transient map, its entries aliasing the bytes read (as
// readAliased's: a delta's values were copied once per entry before,
// which cost a tenth of compacting q20's join state).
func (p *StorePartition) applyLoggedAliased(r *logReader, v int64, data map[string][]byte) error {
	ref, ok := p.glog.lookup(p.rel, v)
	if !ok {
		return nil
	}
	raw, err := r.read(ref)
	if err != nil {
		return err
	}
	if err := p.decodeAliased(raw, data); err != nil {
		return fmt.Errorf("checkpoint: %s: delta of %s version %d at offset %d: %w", ref.seg.path, p.rel, v, ref.off, err)
	}
	return nil
}

// decodeAliased applies a state file's bytes raw (owned by data from now
// on) to data: a v2 file's entries alias raw, older formats are decoded
// as by readInto.
func (p *StorePartition) decodeAliased(raw []byte, data map[string][]byte) error {
	body, err := stateBody(raw)
	if err == nil && bytes.HasPrefix(body, stateColumnsMagic) {
		err = decodeColumnsInto(body, data, maxDecodeBuffer, true)
	} else if err == nil {
		err = decodeState(p.opts.Allocator, raw, data)
	}
	return err
}
