package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// The state log in the epoch log: a new v2 checkpoint keeps its state
// records in the query's epoch log (SegmentLog) instead of state/_log, as
// records of kind 'S' (segment.go). The micro-batch loop stages an
// epoch's offsets record and appends it with the epoch's state record and
// the previous epoch's staged commit record: one write and one fdatasync
// for the epoch (docs/reliability.md has the argument for exactly-once).
//
// A state record of version v supersedes every earlier record of v or
// later versions: a re-run epoch's record comes after its first run's in
// the log, so a re-run needs no truncation (the epoch log is append
// only). Every stateful epoch writes a state record, also when no
// partition changed, so that a re-run that changes nothing supersedes a
// first run that did. Retention: the epoch log's Purge keeps the segments
// from the first one holding a state entry some partition still needs
// (StateLog.Purge computes it).

// OpenQueryStateLog opens the state log of the checkpoint whose state
// directory is stateDir: state/_log when it holds segments (a checkpoint
// written before the state log moved into the epoch log keeps its
// layout) or when there is no v2 epoch log (ep nil), else the state
// records of ep.
func OpenQueryStateLog(stateDir string, ep *SegmentLog, w *Writer) (*StateLog, error) {
	dir := filepath.Join(stateDir, StateLogDir)
	if ep == nil {
		return OpenStateLog(dir, w)
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("checkpoint: list %s: %w", dir, err)
	}
	for _, e := range ents {
		if _, ok := parseSegmentName(e.Name()); ok {
			return OpenStateLog(dir, w)
		}
	}
	return OpenEpochStateLog(ep, w)
}

// OpenCheckpointStateLog opens the state log of the checkpoint whose state
// directory is stateDir for a reader outside the query's loop (tools,
// tests, GroupCommitter.OpenStateLog): as OpenQueryStateLog, with the
// checkpoint's epoch log opened for it when it lives there (closed with
// the state log). A query that runs must not be appended to meanwhile.
func OpenCheckpointStateLog(stateDir string, w *Writer) (*StateLog, error) {
	dir := filepath.Join(stateDir, StateLogDir)
	epochDir := filepath.Join(filepath.Dir(stateDir), EpochLogDir)
	if _, err := os.Stat(epochDir); err != nil || hasSegments(dir) {
		return OpenStateLog(dir, w)
	}
	ep, err := OpenSegmentLog(epochDir, w, false)
	if err != nil {
		return nil, err
	}
	l, err := OpenEpochStateLog(ep, w)
	if err != nil {
		ep.Close()
		return nil, err
	}
	l.ownEp = true
	return l, nil
}

// hasSegments reports whether dir holds segment files.
func hasSegments(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, ok := parseSegmentName(e.Name()); ok {
			return true
		}
	}
	return false
}

// OpenEpochStateLog opens the state log whose records live in the epoch
// log ep. ep stays the caller's: closing the state log does not close it.
func OpenEpochStateLog(ep *SegmentLog, w *Writer) (*StateLog, error) {
	l := &StateLog{dir: ep.Dir(), w: w, ep: ep, index: map[string]map[int64]stateRef{}}
	recs, err := ep.stateRecords()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if err := l.indexEpochRecord(r); err != nil {
			return nil, err
		}
	}
	floor := int64(math.MaxInt64)
	if len(l.segs) > 0 {
		floor = l.segs[0].first
	}
	ep.setStateFloor(floor, l.purged)
	return l, nil
}

// Rebind moves a state log that lives in an epoch log to ep, the same
// checkpoint's epoch log opened again (a query restarted in the process
// keeps its provider and partitions): it indexes ep's state records
// afresh. A state log in state/_log is left as it is.
func (l *StateLog) Rebind(ep *SegmentLog) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ep == nil || l.ep == ep {
		return nil
	}
	recs, err := ep.stateRecords()
	if err != nil {
		return err
	}
	l.dir, l.ep, l.segs, l.index, l.max, l.cover, l.closed = ep.Dir(), ep, nil, map[string]map[int64]stateRef{}, 0, 0, false
	for _, r := range recs {
		if err := l.indexEpochRecord(r); err != nil {
			return err
		}
	}
	floor := int64(math.MaxInt64)
	if len(l.segs) > 0 {
		floor = l.segs[0].first
	}
	ep.setStateFloor(floor, l.purged)
	return nil
}

// indexEpochRecord indexes a state record read from the epoch log.
func (l *StateLog) indexEpochRecord(r stateRecordAt) error {
	if len(r.body) < 8+12 {
		return fmt.Errorf("checkpoint: %s: state record at offset %d is %d bytes, too short: %w", r.seg, r.off, len(r.body), ErrCorrupt)
	}
	cover := int64(binary.LittleEndian.Uint64(r.body))
	rec, err := parseStateRecord(r.body[8:], r.off+8)
	if err != nil {
		return fmt.Errorf("checkpoint: %s: state record at offset %d: %v: %w", r.seg, r.off, err, ErrCorrupt)
	}
	if rec.version != r.epoch+1 || cover <= 0 || cover > rec.version || l.cover != 0 && cover != l.cover {
		return fmt.Errorf("checkpoint: %s: state record at offset %d: version %d (frame says epoch %d), log start %d (earlier records say %d): %w", r.seg, r.off, rec.version, r.epoch, cover, l.cover, ErrCorrupt)
	}
	l.cover = cover
	if rec.version <= l.max {
		l.forget(rec.version)
	}
	l.indexEntries(l.epochSeg(r.seg, r.first), rec.version, r.off, rec.entries)
	return nil
}

// indexEntries records version's entries in segment s. Callers hold l.mu
// (or own l).
func (l *StateLog) indexEntries(s *stateSeg, version, off int64, entries []stateLogEntry) {
	// paths is kept with the record: sized once, not grown by append.
	ref := stateRecRef{version: version, off: off, paths: make([]string, 0, len(entries))}
	for _, e := range entries {
		m := l.index[e.path]
		if m == nil {
			m = map[int64]stateRef{}
			l.index[e.path] = m
		}
		m[version] = stateRef{seg: s, off: e.off, n: e.n}
		ref.paths = append(ref.paths, e.path)
	}
	s.recs = append(s.recs, ref)
	l.max = version
}

// epochSeg returns the segment path (of the epoch log) as the state log
// tracks it, adding it after the others when new.
func (l *StateLog) epochSeg(path string, first int64) *stateSeg {
	if n := len(l.segs); n > 0 && l.segs[n-1].path == path {
		return l.segs[n-1]
	}
	s := &stateSeg{first: first, prevFirst: -1, coverStart: l.cover, path: path}
	l.segs = append(l.segs, s)
	return s
}

// appendEpochLocked appends version's record to the epoch log, with the
// records staged there. Callers hold l.mu.
func (l *StateLog) appendEpochLocked(version int64, deltas []StateDelta) error {
	if l.max >= version {
		// A re-run: the new record supersedes the first run's.
		l.forget(version)
	}
	cover := l.cover
	if cover == 0 {
		cover = version
	}
	// The record is encoded once, into the epoch log's write buffer: a
	// changelog partition's delta goes from its arena into that buffer
	// (StateDelta.enc), not through a delta and a record body of its own.
	lens := slices.Grow(l.lensBuf[:0], len(deltas))[:len(deltas)]
	clear(lens) // appendStatePayload sets them; no earlier epoch's length is read
	l.lensBuf = lens
	// The deltas' own checksums are carried into the record's (crcSpans).
	path, first, off, err := l.ep.appendState(version, 8+statePayloadLen(deltas), func(dst []byte) []byte {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(cover))
		return appendStatePayload(dst, version, deltas, lens, &l.crcSums)
	}, &l.crcSums)
	if err != nil {
		return err
	}
	l.cover = cover
	entries := slices.Grow(l.entriesBuf[:0], len(deltas))[:len(deltas)]
	pos := off + 8 + 12
	for i, d := range deltas {
		pos += 4 + int64(len(d.Path)) + 4
		entries[i] = stateLogEntry{path: d.Path, off: pos, n: lens[i]}
		pos += lens[i]
	}
	l.indexEntries(l.epochSeg(path, first), version, off, entries)
	clear(entries) // indexEntries copied what it keeps
	l.entriesBuf = entries[:0]
	return nil
}

// purgeEpoch tells the epoch log from which segment on the state records
// are needed: the first segment with an entry above its partition's base,
// and at least the newest segment holding state records (it says from
// which version the log covers). Callers hold l.mu.
func (l *StateLog) purgeEpoch(base func(path string) (int64, bool)) {
	floor := int64(math.MaxInt64)
	for i, s := range l.segs {
		needed := i == len(l.segs)-1
		for _, r := range s.recs {
			for _, p := range r.paths {
				if needed {
					break
				}
				if b, ok := base(p); !ok || r.version > b {
					needed = true
				}
			}
			if needed {
				break
			}
		}
		if needed {
			floor = s.first
			break
		}
	}
	l.ep.setStateFloor(floor, nil)
}

// purged forgets the segments the epoch log's retention deleted.
func (l *StateLog) purged(paths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.segs = slices.DeleteFunc(l.segs, func(s *stateSeg) bool {
		if !slices.Contains(paths, s.path) {
			return false
		}
		for _, r := range s.recs {
			for _, p := range r.paths {
				delete(l.index[p], r.version)
			}
		}
		return true
	})
}
