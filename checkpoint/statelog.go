package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// StateLogDir is the state log's directory inside a checkpoint's state
// directory.
const StateLogDir = "_log"

const (
	// stateSegmentVersions: a segment spans at most this many versions
	// before the next append starts a new one (retention drops whole
	// segments).
	stateSegmentVersions = 128
	// stateSegmentBytes: a segment this large is closed at the next
	// append, whatever versions it spans.
	stateSegmentBytes = 64 << 20
)

// StateLog is the group commit log of a query's state: one record per
// state version holding the delta of every partition (of every operator)
// that changed, appended to <state>/_log/<first version>.seg with one
// write and one fdatasync (format in statelog_format.go). A partition that
// did not change in an epoch writes nothing; a version the log covers
// (CoverFrom and later) without an entry for a partition is that
// partition unchanged.
//
// Opening reads every segment once and indexes, per partition, which
// segment and offset holds each version's delta: loads never list a
// directory. A crash during an append leaves a torn last record in the
// newest segment: it is ignored on open and cut off before the next
// append. A damaged record elsewhere, a torn record in an older segment,
// or a segment missing between two others is damage (ErrCorrupt, naming
// the file and offset).
//
// Re-runs: appending version v first durably removes every record of
// version v or later (those of an epoch that did not commit), so that an
// epoch re-run after a crash never reads its first run's changes, even
// when the re-run changes nothing.
//
// Safe for concurrent use.
type StateLog struct {
	dir         string
	w           *Writer
	segVersions int64
	segBytes    int64

	mu     sync.Mutex
	segs   []*stateSeg // ascending by first version
	index  map[string]map[int64]stateRef
	max    int64       // highest version with a record, 0 when none
	active *appendFile // the newest segment, open for appending; nil until needed
	closed bool

	// ep, when set, is the epoch log that holds the records
	// (statelog_epoch.go); segs are then its segments that hold state
	// records, and cover the first version the log covers (0: none yet).
	ep    *SegmentLog
	cover int64
	ownEp bool // Close closes ep (OpenCheckpointStateLog)

	// lensBuf and entriesBuf are appendEpochLocked's scratch, kept for
	// the next epoch (they were two of an epoch's allocations). Their
	// length is the epoch's number of deltas (at most the partitions),
	// so keeping them pins nothing large; they are cleared after use.
	lensBuf []int64
	// crcSums is appendEpochLocked's list of the deltas' checksums,
	// which the record's checksum combines (crc_combine.go).
	crcSums    crcSpans
	entriesBuf []stateLogEntry
}

type stateSeg struct {
	first      int64 // from the name: the first version the segment covers
	prevFirst  int64
	coverStart int64 // the log's first version (same in every segment)
	path       string
	size       int64 // the valid prefix (header and whole records)
	torn       string
	recs       []stateRecRef
}

type stateRecRef struct {
	version int64
	off     int64
	paths   []string
}

type stateRef struct {
	seg    *stateSeg
	off, n int64
}

// OpenStateLog opens the state log in dir (the directory is created by the
// first append). It reads and checks every segment.
func OpenStateLog(dir string, w *Writer) (*StateLog, error) {
	l := &StateLog{dir: dir, w: w, segVersions: stateSegmentVersions, segBytes: stateSegmentBytes, index: map[string]map[int64]stateRef{}}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: list %s: %w", dir, err)
	}
	for _, e := range ents {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() && first > 0 {
			l.segs = append(l.segs, &stateSeg{first: first, path: filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(l.segs, func(i, j int) bool { return l.segs[i].first < l.segs[j].first })
	for i, s := range l.segs {
		if err := l.load(s, i == len(l.segs)-1); err != nil {
			return nil, err
		}
		if s.coverStart > s.first || i > 0 && s.coverStart != l.segs[0].coverStart {
			return nil, fmt.Errorf("checkpoint: %s: says the log starts at version %d, %s says %d: %w", s.path, s.coverStart, filepath.Base(l.segs[0].path), l.segs[0].coverStart, ErrCorrupt)
		}
		if i > 0 && s.prevFirst != l.segs[i-1].first {
			return nil, fmt.Errorf("checkpoint: %s follows the segment starting at version %d, but %s is next: a segment between them is missing: %w", s.path, s.prevFirst, filepath.Base(l.segs[i-1].path), ErrCorrupt)
		}
	}
	return l, nil
}

func (l *StateLog) load(s *stateSeg, newest bool) error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("checkpoint: read %s: %w", s.path, err)
	}
	dec, err := decodeStateSegment(s.path, data)
	if err != nil {
		return err
	}
	if dec.torn != "" && !newest {
		return fmt.Errorf("checkpoint: %s: ends in a torn record (%s) but newer segments follow: %w", s.path, dec.torn, ErrCorrupt)
	}
	s.size, s.torn, s.prevFirst, s.coverStart = dec.valid, dec.torn, dec.prevFirst, dec.coverStart
	if dec.valid < stateLogHeaderLen {
		// Torn while being created: covers nothing yet.
		s.coverStart = s.first
	}
	for _, r := range dec.records {
		if r.version < s.first {
			return fmt.Errorf("checkpoint: %s: record at offset %d is of version %d, below the segment's first version %d: %w", s.path, r.off, r.version, s.first, ErrCorrupt)
		}
		if r.version <= l.max {
			// An older run's records that a crash kept from being
			// removed: the newer run supersedes them.
			l.forget(r.version)
		}
		ref := stateRecRef{version: r.version, off: r.off}
		for _, e := range r.entries {
			m := l.index[e.path]
			if m == nil {
				m = map[int64]stateRef{}
				l.index[e.path] = m
			}
			m[r.version] = stateRef{seg: s, off: e.off, n: e.n}
			ref.paths = append(ref.paths, e.path)
		}
		s.recs = append(s.recs, ref)
		l.max = r.version
	}
	return nil
}

// forget drops the index entries of versions from v on. Callers hold l.mu.
func (l *StateLog) forget(v int64) {
	for _, s := range l.segs {
		kept := s.recs[:0]
		for _, r := range s.recs {
			if r.version < v {
				kept = append(kept, r)
				continue
			}
			for _, p := range r.paths {
				delete(l.index[p], r.version)
			}
		}
		s.recs = kept
	}
	l.max = 0
	for _, s := range l.segs {
		for _, r := range s.recs {
			l.max = max(l.max, r.version)
		}
	}
}

// MaxVersion is the highest version with a record (0: none).
func (l *StateLog) MaxVersion() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// End is the highest version with a record and the segment holding it;
// nil when the log has no record.
func (l *StateLog) End() *StateLogMark {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.segs) - 1; i >= 0; i-- {
		if n := len(l.segs[i].recs); n > 0 {
			return &StateLogMark{Version: l.segs[i].recs[n-1].version, Segment: filepath.Base(l.segs[i].path)}
		}
	}
	return nil
}

// Covers reports whether the log is authoritative for version v: a
// partition without an entry of v did not change.
func (l *StateLog) Covers(v int64) bool { return v >= l.CoverFrom() }

// Read returns path's delta of version (ok false: none, the partition did
// not change when the log covers version).
func (l *StateLog) Read(path string, version int64) (raw []byte, ok bool, err error) {
	ref, ok := l.lookup(path, version)
	if !ok {
		return nil, false, nil
	}
	raw, err = l.read(ref)
	return raw, err == nil, err
}

// Where names the segment file and offset of path's delta of version,
// for messages.
func (l *StateLog) Where(path string, version int64) string {
	ref, ok := l.lookup(path, version)
	if !ok {
		return l.dir
	}
	return fmt.Sprintf("%s at offset %d", ref.seg.path, ref.off)
}

// Changed reports whether path has a delta of a version in (from, to].
func (l *StateLog) Changed(path string, from, to int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := range l.index[path] {
		if v > from && v <= to {
			return true
		}
	}
	return false
}

// StatePartitionPath is the name of the partition in directory dir for
// the state log of stateDir: "<operator>/<partition>".
func StatePartitionPath(stateDir, dir string) (string, error) {
	rel, err := filepath.Rel(stateDir, dir)
	rel = filepath.ToSlash(rel)
	if err != nil || !validStatePath(rel) {
		return "", fmt.Errorf("checkpoint: state partition %s is not <operator>/<partition> under %s", dir, stateDir)
	}
	return rel, nil
}

// Dir returns the log's directory.
func (l *StateLog) Dir() string { return l.dir }

// CoverFrom is the first version the log is authoritative for: from it
// on, a partition without an entry did not change (retention drops only
// entries that no partition needs). MaxInt64 when the log has no segment
// yet.
func (l *StateLog) CoverFrom() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.coverFromLocked()
}

func (l *StateLog) coverFromLocked() int64 {
	if l.ep != nil {
		if l.cover == 0 {
			return math.MaxInt64
		}
		return l.cover
	}
	if len(l.segs) == 0 {
		return math.MaxInt64
	}
	return l.segs[0].coverStart
}

// lookup returns where path's delta of version is, if it has one.
func (l *StateLog) lookup(path string, version int64) (stateRef, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.index[path][version]
	return r, ok
}

// versions returns the versions in (from, to] that have a delta of path.
func (l *StateLog) versions(path string, from, to int64) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int64
	for v := range l.index[path] {
		if v > from && v <= to {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// read returns the delta bytes ref locates.
func (l *StateLog) read(ref stateRef) ([]byte, error) {
	var r logReader
	defer r.close()
	return r.read(ref)
}

// logReader reads deltas of the state log keeping the segment it read
// last open: a snapshot reads the deltas of tens of versions, mostly from
// one segment, and opening and closing the segment for each was most of
// the cost of a small partition's snapshot.
type logReader struct {
	seg *stateSeg
	f   *os.File
}

// read returns the delta bytes ref locates.
func (r *logReader) read(ref stateRef) ([]byte, error) {
	if r.f == nil || r.seg != ref.seg {
		r.close()
		f, err := os.Open(ref.seg.path)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: read %s: %w", ref.seg.path, err)
		}
		r.seg, r.f = ref.seg, f
	}
	buf := make([]byte, ref.n)
	if _, err := r.f.ReadAt(buf, ref.off); err != nil {
		return nil, fmt.Errorf("checkpoint: read %d bytes at offset %d of %s: %v: %w", ref.n, ref.off, ref.seg.path, err, ErrCorrupt)
	}
	return buf, nil
}

// close closes the open segment, if any.
func (r *logReader) close() {
	if r.f != nil {
		r.f.Close()
	}
	r.seg, r.f = nil, nil
}

// Append makes version's deltas durable: records of version or later are
// removed first (a re-run), then one record is appended with one write
// and one fdatasync. With no deltas nothing is written, except that the
// log's first segment is created (empty) so that the log covers version
// from now on.
func (l *StateLog) Append(version int64, deltas []StateDelta) error {
	if version <= 0 {
		return fmt.Errorf("checkpoint: state log %s: bad version %d", l.dir, version)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("checkpoint: state log %s is closed", l.dir)
	}
	if l.ep != nil {
		return l.appendEpochLocked(version, deltas)
	}
	if l.max >= version || len(l.segs) > 0 && l.segs[len(l.segs)-1].first > version {
		if err := l.truncateFrom(version); err != nil {
			return err
		}
	}
	if len(deltas) == 0 && len(l.segs) > 0 {
		return nil
	}
	return l.appendLocked(version, deltas)
}

func (l *StateLog) appendLocked(version int64, deltas []StateDelta) (err error) {
	var cur *stateSeg
	if n := len(l.segs); n > 0 {
		cur = l.segs[n-1]
	}
	fresh := cur == nil || len(cur.recs) > 0 && (cur.first+l.segVersions <= version || cur.size >= l.segBytes)
	var buf []byte
	if fresh {
		if l.active != nil {
			l.active.Close()
			l.active = nil
		}
		if cur != nil && cur.torn != "" {
			if err := l.cutTail(cur); err != nil {
				return err
			}
		}
		prev, start := int64(-1), version
		if cur != nil {
			prev, start = cur.first, l.segs[0].coverStart
		}
		if err := l.w.MkdirAll(l.dir); err != nil {
			return err
		}
		cur = &stateSeg{first: version, prevFirst: prev, coverStart: start, path: filepath.Join(l.dir, segmentName(version))}
		buf = appendStateLogHeader(buf, prev, start)
	} else if err := l.openActive(cur); err != nil {
		return err
	}
	recOff := cur.size + int64(len(buf))
	lens := make([]int64, len(deltas))
	if len(deltas) > 0 {
		buf = appendStateRecord(buf, version, deltas, lens)
	}
	f, err := appendDurably(l.w, l.dir, cur.path, l.active, cur.size, fresh, buf)
	l.active = f
	if err != nil {
		return err
	}
	if fresh {
		l.segs = append(l.segs, cur)
	}
	cur.size += int64(len(buf))
	if len(deltas) > 0 {
		ref := stateRecRef{version: version, off: recOff}
		// Entry offsets: the same walk appendStateRecord made.
		pos := recOff + recordHeaderLen + 12
		for i, d := range deltas {
			pos += 4 + int64(len(d.Path)) + 4
			m := l.index[d.Path]
			if m == nil {
				m = map[int64]stateRef{}
				l.index[d.Path] = m
			}
			m[version] = stateRef{seg: cur, off: pos, n: lens[i]}
			pos += lens[i]
			ref.paths = append(ref.paths, d.Path)
		}
		cur.recs = append(cur.recs, ref)
		l.max = version
	}
	return nil
}

// truncateFrom durably removes every record of version v or later:
// segments that start at v or later are deleted, the one holding the
// first such record is cut before it. Callers hold l.mu.
func (l *StateLog) truncateFrom(v int64) error {
	if l.active != nil {
		l.active.Close()
		l.active = nil
	}
	removed := false
	for len(l.segs) > 0 && l.segs[len(l.segs)-1].first >= v {
		s := l.segs[len(l.segs)-1]
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint: remove %s (a re-run epoch's state): %w", s.path, err)
		}
		l.segs = l.segs[:len(l.segs)-1]
		removed = true
	}
	if removed && l.w.sync() {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	for _, s := range l.segs {
		for _, r := range s.recs {
			if r.version >= v {
				s.size = r.off
				if err := l.cutTail(s); err != nil {
					return err
				}
				break
			}
		}
	}
	l.forget(v)
	return nil
}

// openActive opens the newest segment for appending, cutting a torn tail,
// and checks that nobody else appended to it. Callers hold l.mu.
func (l *StateLog) openActive(cur *stateSeg) error {
	if l.active == nil {
		f, err := openAppendFile(cur.path, l.w)
		if err != nil {
			return fmt.Errorf("checkpoint: open %s: %w", cur.path, err)
		}
		size, err := f.size()
		if err != nil {
			f.Close()
			return fmt.Errorf("checkpoint: stat %s: %w", cur.path, err)
		}
		if size < cur.size {
			f.Close()
			return fmt.Errorf("checkpoint: %s shrank from %d to %d bytes while open: %w", cur.path, cur.size, size, ErrCorrupt)
		}
		if size != cur.size {
			if err := f.f.Truncate(cur.size); err != nil {
				f.Close()
				return fmt.Errorf("checkpoint: cut the torn tail of %s at %d: %w", cur.path, cur.size, err)
			}
		}
		cur.torn = ""
		l.active = f
		return nil
	}
	size, err := l.active.size()
	if err != nil {
		return fmt.Errorf("checkpoint: stat %s: %w", cur.path, err)
	}
	if size != cur.size {
		return fmt.Errorf("checkpoint: %s changed size under this query (%d bytes, %d expected): multiple streaming queries are concurrently using %s: %w", cur.path, size, cur.size, l.dir, ErrExists)
	}
	return nil
}

// cutTail durably truncates a segment to its valid prefix. Callers hold
// l.mu.
func (l *StateLog) cutTail(s *stateSeg) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: open %s: %w", s.path, err)
	}
	defer f.Close()
	if err := f.Truncate(s.size); err != nil {
		return fmt.Errorf("checkpoint: cut %s at %d: %w", s.path, s.size, err)
	}
	if l.w.sync() {
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("checkpoint: fdatasync %s: %w", s.path, err)
		}
	}
	s.torn = ""
	return nil
}

// Purge is retention: it deletes, oldest first and by name, segments that
// no partition needs: a segment goes when each of its entries is of a
// version at or below its partition's base, as base reports it (the
// snapshot its oldest retained version is rebuilt from; false: a
// partition this run does not know, which may still need it). The newest
// segment stays.
func (l *StateLog) Purge(base func(path string) (int64, bool)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ep != nil {
		// The epoch log deletes its segments (SegmentLog.Purge).
		l.purgeEpoch(base)
		return nil
	}
	for len(l.segs) > 1 {
		s := l.segs[0]
		for _, r := range s.recs {
			for _, p := range r.paths {
				if b, ok := base(p); !ok || r.version > b {
					return nil
				}
			}
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint: purge %s: %w", s.path, err)
		}
		for _, r := range s.recs {
			for _, p := range r.paths {
				delete(l.index[p], r.version)
			}
		}
		l.segs = l.segs[1:]
	}
	return nil
}

// Close closes the active segment (not the epoch log that holds the
// records, when one does).
func (l *StateLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.ownEp {
		l.ownEp = false
		return l.ep.Close()
	}
	if l.active != nil {
		err := l.active.Close()
		l.active = nil
		return err
	}
	return nil
}
