package checkpoint

import (
	"errors"
	"fmt"
	"log/slog"
)

// compactSnapshot writes the snapshot of version latest of a partition
// that holds no decoded copy (its operator keeps the state live): the
// newest snapshot below it plus the deltas after, merged off the epoch's
// path in background maintenance. It costs the state's size, and runs
// only when the deltas since the last snapshot hold as many bytes
// (snapshotDue): amortized O(changes) per epoch. covered is the delta
// bytes the snapshot makes unnecessary to replay. The provider's
// compaction slots bound how many partitions decode their state at once,
// so that compaction's transient copy is one partition's, not the
// operator's whole state. A snapshot that cannot be built is skipped (it
// is a shortcut; the deltas stay): a damaged base is logged, not fatal.
func (p *StorePartition) compactSnapshot(files map[fileKey]bool, latest, covered int64) error {
	if slots := p.opts.compactSlots; slots != nil {
		slots <- struct{}{}
		defer func() { <-slots }()
	}
	base := int64(0)
	for k := range files {
		if k.kind == "snapshot" && k.version < latest && k.version > base {
			base = k.version
		}
	}
	data := map[string][]byte{}
	if base > 0 {
		if _, err := p.readInto(p.file(base, "snapshot"), data); err != nil {
			if errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewerFormat) {
				slog.Warn("state snapshot unreadable; compaction skipped", "err", err)
				return nil
			}
			return err
		}
	}
	for v := base + 1; v <= latest; v++ {
		if _, err := p.applyDelta(files, v, latest, data); err != nil {
			return fmt.Errorf("checkpoint: compact state %s to version %d: %w", p.dir, latest, err)
		}
	}
	var state int64
	keys := make([]string, 0, len(data))
	for k, v := range data {
		keys = append(keys, k)
		state += int64(len(k) + len(v))
	}
	raw, err := encodeState(p.opts.Allocator, keys, data, nil)
	if err != nil {
		return fmt.Errorf("checkpoint: encode snapshot for %s: %w", p.dir, err)
	}
	if err := p.w.WriteFile(p.file(latest, "snapshot"), raw, true); err != nil {
		return err
	}
	files[fileKey{latest, "snapshot"}] = true
	p.mu.Lock()
	if p.files != nil {
		p.files[fileKey{latest, "snapshot"}] = true
	}
	p.sinceSnap = max(p.sinceSnap-covered, 0)
	if p.dataless {
		// The exact size replaces the estimate, plus what was upserted
		// since the compacted version.
		p.estBytes = state + p.sinceSnap
	}
	p.mu.Unlock()
	return nil
}
