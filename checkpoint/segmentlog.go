package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
)

// EpochLogDir is the directory of a checkpoint's v2 epoch log.
const EpochLogDir = "epochlog"

// DefaultSegmentEpochs is how many epochs a segment spans before the next
// append starts a new one. Retention drops whole segments, so a query
// keeps between minBatchesToRetain and minBatchesToRetain plus this many
// epochs of log.
const DefaultSegmentEpochs = 128

// SegmentLog is the v2 epoch log of one query checkpoint: the offset and
// commit records of every epoch appended to segment files
// <checkpoint>/epochlog/<first epoch>.seg (format in segment.go), and,
// when the query's state log lives here (OpenEpochStateLog), its state
// records, so that an epoch's offsets, state and the previous epoch's
// commit share one write and one fdatasync.
//
// Durability: an append writes every record it carries (the staged ones
// first) with one write and one fdatasync (a large append is up to three
// writes in file order, its whole blocks direct: appendfile.go); a new
// segment also fsyncs the directory once, when it is created. Opening
// reads every segment once
// and keeps the records in memory (retention bounds them), so reads and
// retention never list the directory again.
//
// A crash during an append leaves a torn last record in the newest
// segment: it is ignored on open and cut off before the next append. A
// record that fails its checksum with more records after it, a torn record
// in an older segment, or a gap in the offset epochs (a missing segment)
// is damage, reported with ErrCorrupt naming the file.
//
// Safe for concurrent use. Two SegmentLogs appending to the same
// directory are detected (the active segment's size changed under the
// append) and refused as concurrent use of the checkpoint.
type SegmentLog struct {
	dir       string
	w         *Writer
	segEpochs int64

	mu      sync.Mutex
	segs    []*segmentInfo // ascending by first epoch
	entries [2]map[int64][]byte
	staged  []record
	allBuf  []record    // appendLocked's list of records, kept empty between appends
	active  *appendFile // the newest segment, open for appending; nil until needed
	closed  bool

	// loadedState holds the state records read at open until the state
	// log takes them (stateRecords).
	loadedState []stateRecordAt
	stateTaken  bool
	// stateFloor: segments from the one starting at this epoch on hold
	// state records the state log still needs; Purge keeps them.
	// MaxInt64 when no state log lives here.
	stateFloor int64
	// onPurge, when set, is told the segments Purge deleted (outside
	// l.mu).
	onPurge func(paths []string)
	// onLock, when set, is called once (under l.mu), after the first
	// append that holds the newest segment's lock: this log's process is
	// then the checkpoint's single writer (OnWriterLock).
	onLock   func()
	lockSeen bool
	// wbuf is the write buffer of appends, kept between them (an epoch's
	// records are encoded into it, then written) up to maxKeptWriteBuf.
	wbuf []byte
	// wbufMeter counts wbuf's capacity in SharedBufferBytes while kept.
	wbufMeter sharedMeter
}

// maxKeptWriteBuf: a larger write buffer (an epoch with a large state
// record) is dropped after its append rather than held for good.
const maxKeptWriteBuf = 4 << 20

// stateRecordAt is a state record and where its body lies.
type stateRecordAt struct {
	seg   string // the segment's path
	first int64  // the segment's first epoch
	epoch int64  // the epoch that wrote it (its version is epoch+1)
	off   int64  // the body's offset in the segment
	body  []byte
}

// segmentInfo is what the log knows of one segment file.
type segmentInfo struct {
	first int64 // from the name
	path  string
	size  int64 // length of the valid prefix (header and whole records)
	torn  string
	recs  []recordRef
	last  int64 // highest epoch of its records, -1 when none
}

type recordRef struct {
	kind  recordKind
	epoch int64
}

func kindIndex(k recordKind) int {
	if k == kindCommit {
		return 1
	}
	return 0
}

// OpenSegmentLog opens the epoch log in dir, creating the directory when
// create is set. It reads and checks every segment.
func OpenSegmentLog(dir string, w *Writer, create bool) (*SegmentLog, error) {
	if create {
		if err := w.MkdirAll(dir); err != nil {
			return nil, err
		}
	}
	l := &SegmentLog{dir: dir, w: w, segEpochs: DefaultSegmentEpochs, stateFloor: math.MaxInt64}
	l.entries[0], l.entries[1] = map[int64][]byte{}, map[int64][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && !create) {
		return nil, fmt.Errorf("checkpoint: list %s: %w", dir, err)
	}
	for _, e := range ents {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			l.segs = append(l.segs, &segmentInfo{first: first, path: filepath.Join(dir, e.Name()), last: -1})
		}
	}
	sort.Slice(l.segs, func(i, j int) bool { return l.segs[i].first < l.segs[j].first })
	for i, s := range l.segs {
		if err := l.load(s, i == len(l.segs)-1); err != nil {
			return nil, err
		}
	}
	if err := l.checkContiguous(); err != nil {
		return nil, err
	}
	return l, nil
}

// OnWriterLock sets f to be called once, after the first append that holds
// the newest segment's lock (an exclusive flock, taken at the first append
// and kept while the segment is open): from then on no other process
// appends to this log, so its caller is the checkpoint's single writer and
// may clear what dead writers left (RemoveStaleTemps). A file system
// without flock never calls f. f runs under the log's mutex, during that
// append: it must not use the log.
func (l *SegmentLog) OnWriterLock(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onLock = f
}

// SetSegmentEpochs sets how many epochs a segment spans (tests use small
// values to exercise rotation and purging).
func (l *SegmentLog) SetSegmentEpochs(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.segEpochs = max(n, 1)
}

// Dir returns the log's directory.
func (l *SegmentLog) Dir() string { return l.dir }

func (l *SegmentLog) load(s *segmentInfo, newest bool) error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("checkpoint: read %s: %w", s.path, err)
	}
	dec, err := decodeSegment(s.path, data)
	if err != nil {
		return err
	}
	if dec.torn != "" && !newest {
		return fmt.Errorf("checkpoint: %s: ends in a torn record (%s) but newer segments follow: %w", s.path, dec.torn, ErrCorrupt)
	}
	s.size, s.torn = dec.valid, dec.torn
	for _, r := range dec.records {
		if r.epoch < s.first {
			return fmt.Errorf("checkpoint: %s: holds a %s record of epoch %d, below the segment's first epoch %d: %w", s.path, r.kind, r.epoch, s.first, ErrCorrupt)
		}
		if r.kind == kindState {
			// Indexed by the state log (a later record of a version
			// supersedes an earlier one: a re-run epoch's).
			l.loadedState = append(l.loadedState, stateRecordAt{seg: s.path, first: s.first, epoch: r.epoch, off: r.off, body: r.body})
			s.recs = append(s.recs, recordRef{r.kind, r.epoch})
			s.last = max(s.last, r.epoch)
			continue
		}
		m := l.entries[kindIndex(r.kind)]
		if old, ok := m[r.epoch]; ok {
			if string(old) != string(r.body) {
				return fmt.Errorf("checkpoint: %s: two different %s records for epoch %d (was another query using this checkpoint concurrently?): %w", s.path, r.kind, r.epoch, ErrCorrupt)
			}
			continue
		}
		m[r.epoch] = r.body
		s.recs = append(s.recs, recordRef{r.kind, r.epoch})
		s.last = max(s.last, r.epoch)
	}
	return nil
}

// checkContiguous reports a gap in the offset epochs: a missing segment.
func (l *SegmentLog) checkContiguous() error {
	prev := int64(-1)
	var prevPath string
	for _, s := range l.segs {
		for _, r := range s.recs {
			if r.kind != kindOffsets {
				continue
			}
			if prev >= 0 && r.epoch != prev+1 {
				return fmt.Errorf("checkpoint: %s: offsets jump from epoch %d (in %s) to %d: a segment between them is missing: %w", l.dir, prev, filepath.Base(prevPath), r.epoch, ErrCorrupt)
			}
			prev, prevPath = r.epoch, s.path
		}
	}
	return nil
}

// has reports whether epoch has a record of kind, written or staged.
// Callers hold l.mu.
func (l *SegmentLog) has(kind recordKind, epoch int64) bool {
	if kind == kindState {
		return false // a re-run's state record supersedes the first run's
	}
	if _, ok := l.entries[kindIndex(kind)][epoch]; ok {
		return true
	}
	for _, r := range l.staged {
		if r.kind == kind && r.epoch == epoch {
			return true
		}
	}
	return false
}

// add appends one record (with the staged ones) durably; false when the
// epoch already has a record of this kind.
func (l *SegmentLog) add(kind recordKind, epoch int64, body []byte) (bool, error) {
	if epoch < 0 {
		return false, fmt.Errorf("checkpoint: negative epoch %d", epoch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.has(kind, epoch) {
		return false, nil
	}
	if _, _, err := l.appendLocked([]record{{kind: kind, epoch: epoch, body: body}}); err != nil {
		return false, err
	}
	return true, nil
}

// appendState appends the state record of version (with the staged
// records, before it) durably, and returns where its body lies: the
// segment's path, its first epoch and the offset. The record's epoch is
// the one that produced the version (version-1), so that a segment never
// holds a record of an epoch before its first. build appends the
// record's body to the segment's write buffer (encoded there, not copied
// in); size is the length it appends, at most (0: not known).
func (l *SegmentLog) appendState(version int64, size int, build func(dst []byte) []byte, sums *crcSpans) (seg string, first, off int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, offs, err := l.appendLocked([]record{{kind: kindState, epoch: version - 1, build: build, size: size, sums: sums}})
	if err != nil {
		return "", 0, 0, err
	}
	return cur.path, cur.first, offs[0], nil
}

// stateRecords returns the state records of the log, in log order: the
// first time those read at open (then forgotten), later read again from
// the segments.
func (l *SegmentLog) stateRecords() ([]stateRecordAt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stateTaken {
		out := l.loadedState
		l.loadedState, l.stateTaken = nil, true
		return out, nil
	}
	var out []stateRecordAt
	for _, s := range l.segs {
		if !slices.ContainsFunc(s.recs, func(r recordRef) bool { return r.kind == kindState }) {
			continue
		}
		data, err := os.ReadFile(s.path)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: read %s: %w", s.path, err)
		}
		dec, err := decodeSegment(s.path, data)
		if err != nil {
			return nil, err
		}
		for _, r := range dec.records {
			if r.kind == kindState && r.off < s.size {
				out = append(out, stateRecordAt{seg: s.path, first: s.first, epoch: r.epoch, off: r.off, body: r.body})
			}
		}
	}
	return out, nil
}

// setStateFloor says from which segment (by its first epoch) on the state
// log needs its records; onPurge, when not nil, is told which segments
// Purge deleted from then on.
func (l *SegmentLog) setStateFloor(first int64, onPurge func(paths []string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stateFloor = first
	if onPurge != nil {
		l.onPurge = onPurge
	}
}

// stage queues a record for the next append (or Flush); false when the
// epoch already has a record of this kind.
func (l *SegmentLog) stage(kind recordKind, epoch int64, body []byte) (bool, error) {
	if epoch < 0 {
		return false, fmt.Errorf("checkpoint: negative epoch %d", epoch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false, fmt.Errorf("checkpoint: epoch log %s is closed", l.dir)
	}
	if l.has(kind, epoch) {
		return false, nil
	}
	l.staged = append(l.staged, record{kind: kind, epoch: epoch, body: body})
	return true, nil
}

// Flush durably appends the staged records, if any.
func (l *SegmentLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.staged) == 0 {
		return nil
	}
	_, _, err := l.appendLocked(nil)
	return err
}

// Staged reports whether records wait for the next append.
func (l *SegmentLog) Staged() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.staged) > 0
}

// Close flushes the staged records and closes the active segment.
func (l *SegmentLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var err error
	if len(l.staged) > 0 {
		_, _, err = l.appendLocked(nil)
	}
	l.closed = true
	l.wbuf = nil
	l.wbufMeter.note(0)
	if l.active != nil {
		err = errors.Join(err, l.active.Close())
		l.active = nil
	}
	return err
}

// fitWriteBuf replaces the kept write buffer, before an append builds
// recs in it, with one that holds them after the alignment's skip and
// with an eighth to spare (the size appendLocked keeps a buffer it grew
// at), when the records' known length says they would not fit and the
// buffer would be kept (maxKeptWriteBuf). The old buffer's bytes are
// not copied: an append starts it empty. Callers hold l.mu.
func (l *SegmentLog) fitWriteBuf(recs []record) {
	n := segmentHeaderLen
	for _, r := range recs {
		n += recordHeaderLen + recordFixedLen + len(r.body) + r.size
	}
	if cap(l.wbuf) >= n+directBlock {
		return
	}
	if n += n/8 + directBlock; n <= maxKeptWriteBuf {
		l.wbuf = make([]byte, 0, n)
		l.w.prefault(l.wbuf[:n])
	}
}

// appendLocked writes the staged records and recs to the active segment
// (starting a new one when the active one spans segEpochs) with one write
// and one fdatasync, then makes them visible. It returns the segment and
// the offsets of recs' bodies in it. On failure nothing becomes visible
// and the staged records stay staged. Callers hold l.mu.
func (l *SegmentLog) appendLocked(recs []record) (_ *segmentInfo, offs []int64, err error) {
	if l.closed {
		return nil, nil, fmt.Errorf("checkpoint: epoch log %s is closed", l.dir)
	}
	// The staged records and recs, in a slice kept for the next append
	// (the staged one is kept too: an epoch's two or three records
	// allocated three slices).
	all := append(append(l.allBuf[:0], l.staged...), recs...)
	low := all[0].epoch
	for _, r := range all {
		low = min(low, r.epoch)
	}
	var cur *segmentInfo
	if n := len(l.segs); n > 0 {
		cur = l.segs[n-1]
	}
	if cur != nil && cur.last < 0 && cur.first > low {
		// An empty segment left by a crash while it was being created,
		// named after an epoch this append comes before: start again.
		if l.active != nil {
			l.active.Close()
			l.active = nil
		}
		if err := os.Remove(cur.path); err != nil {
			return nil, nil, fmt.Errorf("checkpoint: remove empty segment %s: %w", cur.path, err)
		}
		l.segs = l.segs[:len(l.segs)-1]
		cur = nil
		if n := len(l.segs); n > 0 {
			cur = l.segs[n-1]
		}
	}
	// A segment spans segEpochs epochs, or less when state records made it
	// large (a new segment is named after its lowest epoch, so only an
	// append of a later epoch may start one).
	fresh := cur == nil || cur.last >= 0 && (cur.first+l.segEpochs <= low || cur.size >= stateSegmentBytes && low > cur.first)
	if fresh {
		if l.active != nil {
			l.active.Close()
			l.active = nil
		}
		if cur != nil && cur.torn != "" {
			// A crash left a torn tail in the segment this one follows:
			// cut it durably first, or it would read as damage then.
			if err := l.cutTail(cur); err != nil {
				return nil, nil, err
			}
		}
		cur = &segmentInfo{first: low, path: filepath.Join(l.dir, segmentName(low)), last: -1}
	} else if err := l.openActive(cur); err != nil {
		return nil, nil, err
	}
	base := cur.size
	if fresh {
		base = 0
	}
	// The records are built in place where their whole blocks can be
	// written direct from (appendfile.go): at the kept buffer's byte
	// that lies on base's offset within a block. A kept buffer too small
	// for them is replaced before they are built, not grown by append
	// while they are: growing copied the bytes built so far and the
	// whole old array and zeroed the rest of the new one (fresh pages),
	// its blocks were not aligned, so the direct write copied them again,
	// and the array was then replaced by one with room to spare.
	l.fitWriteBuf(all)
	buf := alignedAt(l.wbuf, base)
	defer func() {
		if cap(buf) > maxKeptWriteBuf {
			l.wbuf = nil
		} else if arrayEnd(buf) != arrayEnd(l.wbuf) {
			// A new array: append grew it from its start. Kept with a
			// block and an eighth to spare, so that an epoch of the same
			// size fits after the alignment's skip.
			if n := len(buf) + len(buf)/8 + directBlock; cap(buf) >= n || n > maxKeptWriteBuf {
				l.wbuf = buf[:0]
			} else {
				l.wbuf = make([]byte, 0, n)
			}
		}
		if l.wbufMeter.n == nil {
			l.wbufMeter = newSharedMeter(l)
		}
		l.wbufMeter.note(cap(l.wbuf))
	}()
	if base < segmentHeaderLen {
		buf = appendSegmentHeader(buf)
	}
	for i, r := range all {
		if i >= len(l.staged) {
			offs = append(offs, base+int64(len(buf))+recordHeaderLen+recordFixedLen)
		}
		buf = appendRecord(buf, r)
	}
	f, err := appendDurablyLocked(l.w, l.dir, cur.path, l.active, cur.size, fresh, true, buf)
	l.active = f
	if err != nil {
		return nil, nil, err
	}
	if f.exclusive && !l.lockSeen {
		l.lockSeen = true
		if l.onLock != nil {
			l.onLock()
		}
	}
	if fresh {
		cur.size = 0
		l.segs = append(l.segs, cur)
	}
	cur.size += int64(len(buf))
	for _, r := range all {
		if r.kind != kindState {
			l.entries[kindIndex(r.kind)][r.epoch] = r.body
		}
		cur.recs = append(cur.recs, recordRef{r.kind, r.epoch})
		cur.last = max(cur.last, r.epoch)
	}
	clear(all) // no bodies held past the append
	l.allBuf = all[:0]
	clear(l.staged)
	l.staged = l.staged[:0]
	return cur, offs, nil
}

// openActive opens the newest segment for appending, cutting a torn tail
// left by a crash, and checks that nobody else appended to it.
func (l *SegmentLog) openActive(cur *segmentInfo) error {
	if l.active == nil {
		f, err := openAppendFile(cur.path, l.w)
		if err != nil {
			return fmt.Errorf("checkpoint: open %s: %w", cur.path, err)
		}
		// Locked before its size is read or its tail cut: a log that
		// another one appends to is refused, not cut back.
		if f.exclusive, err = lockExclusive(f.f); err != nil {
			f.Close()
			return concurrentUse(cur.path, l.dir, err)
		}
		size, err := f.size()
		if err != nil {
			f.Close()
			return fmt.Errorf("checkpoint: stat %s: %w", cur.path, err)
		}
		if size != cur.size {
			// A torn tail from a crash (known since open), or an append
			// that failed: cut it before appending after it.
			if size < cur.size {
				f.Close()
				return fmt.Errorf("checkpoint: %s shrank from %d to %d bytes while open: %w", cur.path, cur.size, size, ErrCorrupt)
			}
			if err := f.f.Truncate(cur.size); err != nil {
				f.Close()
				return fmt.Errorf("checkpoint: cut the torn tail of %s at %d: %w", cur.path, cur.size, err)
			}
		}
		cur.torn = ""
		l.active = f
		return nil
	}
	if l.active.exclusive {
		// Nobody else appends while the lock is held, and a failed append
		// closed the file (appendDurably), so its length is cur.size:
		// an fstat per epoch would only say so again.
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

// concurrentUse is the error of a segment whose lock another log holds.
func concurrentUse(path, dir string, err error) error {
	return fmt.Errorf("checkpoint: %s is %v: multiple streaming queries are concurrently using %s: %w", path, err, dir, ErrExists)
}

// get returns the written body of epoch's record of kind.
func (l *SegmentLog) get(kind recordKind, epoch int64) ([]byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.entries[kindIndex(kind)][epoch]
	return b, ok
}

// epochs lists the epochs with a written record of kind, ascending.
func (l *SegmentLog) epochs(kind recordKind) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]int64, 0, len(l.entries[kindIndex(kind)]))
	for e := range l.entries[kindIndex(kind)] {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// latest returns the highest epoch with a written record of kind.
func (l *SegmentLog) latest(kind recordKind) (int64, []byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The newest segments hold the newest records: scan from the end.
	for i := len(l.segs) - 1; i >= 0; i-- {
		best, found := int64(-1), false
		for _, r := range l.segs[i].recs {
			if r.kind == kind && r.epoch > best {
				if _, ok := l.entries[kindIndex(kind)][r.epoch]; ok {
					best, found = r.epoch, true
				}
			}
		}
		if found {
			return best, l.entries[kindIndex(kind)][best], true
		}
	}
	return 0, nil, false
}

// Purge is retention: it deletes, oldest first and by name, the segments
// all of whose records are of epochs before the given one, except the
// newest segment. Entries of retained segments stay readable, so at least
// the epochs from before on are kept.
//
// Segments holding state records the state log still needs (from the
// one its floor names on) stay too.
func (l *SegmentLog) Purge(before int64) error {
	l.mu.Lock()
	var removed []string
	var err error
	for len(l.segs) > 1 && l.segs[0].last < before && l.segs[0].first < l.stateFloor {
		s := l.segs[0]
		if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = fmt.Errorf("checkpoint: purge %s: %w", s.path, rerr)
			break
		}
		for _, r := range s.recs {
			if r.kind != kindState {
				delete(l.entries[kindIndex(r.kind)], r.epoch)
			}
		}
		l.segs = l.segs[1:]
		removed = append(removed, s.path)
	}
	onPurge := l.onPurge
	l.mu.Unlock()
	if len(removed) > 0 && onPurge != nil {
		onPurge(removed)
	}
	return err
}

// drop deletes exactly the records of kind below before, rewriting the
// segments that hold them (each atomically, by rename). It is for tools
// and tests run while the query is stopped, not for retention (a state
// log open on this log would read the moved state records at their old
// offsets).
func (l *SegmentLog) drop(kind recordKind, before int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.staged) > 0 {
		if _, _, err := l.appendLocked(nil); err != nil {
			return err
		}
	}
	if l.active != nil {
		l.active.Close()
		l.active = nil
	}
	kept := l.segs[:0]
	for _, s := range l.segs {
		var keep []recordRef
		for _, r := range s.recs {
			if r.kind != kind || r.epoch >= before {
				keep = append(keep, r)
			}
		}
		if len(keep) == len(s.recs) {
			kept = append(kept, s)
			continue
		}
		for _, r := range s.recs {
			if r.kind == kind && r.epoch < before {
				delete(l.entries[kindIndex(kind)], r.epoch)
			}
		}
		// State records are not kept in memory: copy them from the file.
		var states []record
		if slices.ContainsFunc(keep, func(r recordRef) bool { return r.kind == kindState }) {
			data, err := os.ReadFile(s.path)
			if err != nil {
				return fmt.Errorf("checkpoint: read %s: %w", s.path, err)
			}
			dec, err := decodeSegment(s.path, data)
			if err != nil {
				return err
			}
			for _, r := range dec.records {
				if r.kind == kindState {
					states = append(states, r)
				}
			}
		}
		if len(keep) == 0 {
			if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("checkpoint: drop %s: %w", s.path, err)
			}
			continue
		}
		buf := appendSegmentHeader(nil)
		s.last = -1
		for _, r := range keep {
			if r.kind == kindState {
				buf = appendRecord(buf, states[0])
				states = states[1:]
			} else {
				buf = appendRecord(buf, record{kind: r.kind, epoch: r.epoch, body: l.entries[kindIndex(r.kind)][r.epoch]})
			}
			s.last = max(s.last, r.epoch)
		}
		if err := l.w.WriteFile(s.path, buf, true); err != nil {
			return err
		}
		s.recs, s.size, s.torn = keep, int64(len(buf)), ""
		kept = append(kept, s)
	}
	l.segs = kept
	return nil
}

// cutTail durably truncates a segment to its valid prefix. Callers hold
// l.mu.
func (l *SegmentLog) cutTail(s *segmentInfo) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: open %s: %w", s.path, err)
	}
	defer f.Close()
	if err := f.Truncate(s.size); err != nil {
		return fmt.Errorf("checkpoint: cut the torn tail of %s at %d: %w", s.path, s.size, err)
	}
	if l.w.sync() {
		if err := fdatasync(f); err != nil {
			return fmt.Errorf("checkpoint: fdatasync %s: %w", s.path, err)
		}
	}
	s.torn = ""
	return nil
}

// where names the segment file holding epoch's record of kind, or the
// log's directory when no segment does.
func (l *SegmentLog) where(kind recordKind, epoch int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		for _, r := range s.recs {
			if r.kind == kind && r.epoch == epoch {
				return s.path
			}
		}
	}
	return l.dir
}

// appendDurably appends buf to the segment file path, as both segment
// logs (the epoch log and the state log) do: a fresh segment is created
// (O_EXCL, so a second writer is refused) and its directory entry synced;
// an existing one is appended to through active, which holds size bytes.
// A large append writes its whole blocks with O_DIRECT (appendfile.go).
// On success buf is durable (fdatasync) and the open file is returned for
// the next append. On failure what this append may have left is cut (a
// fresh file removed) and the file closed (nil returned), so that the next
// append reopens the segment and checks its size again; a failure before
// anything was written leaves active as it was.
func appendDurably(w *Writer, dir, path string, active *appendFile, size int64, fresh bool, buf []byte) (f *appendFile, err error) {
	return appendDurablyLocked(w, dir, path, active, size, fresh, false, buf)
}

// appendDurablyLocked is appendDurably that, with lock set, locks a fresh
// segment (lockExclusive) before writing to it, as the epoch log does.
func appendDurablyLocked(w *Writer, dir, path string, active *appendFile, size int64, fresh, lock bool, buf []byte) (f *appendFile, err error) {
	if err := w.step(BeforeTempWrite, path); err != nil {
		return active, err
	}
	f = active
	if fresh {
		f, err = createAppendFile(path, w)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("checkpoint: %s appeared while creating it: multiple streaming queries are concurrently using %s: %w", path, dir, ErrExists)
			}
			return nil, fmt.Errorf("checkpoint: create %s: %w", path, err)
		}
		if lock {
			if f.exclusive, err = lockExclusive(f.f); err != nil {
				// Not removed: the file is the lock holder's now.
				f.Close()
				return nil, concurrentUse(path, dir, err)
			}
		}
	}
	defer func() {
		if err != nil {
			f.f.Truncate(size)
			f.Close()
			f = nil
			if fresh {
				os.Remove(path)
			}
		}
	}()
	if err := f.writeAt(buf, size); err != nil {
		return f, fmt.Errorf("checkpoint: append to %s: %w", path, err)
	}
	if err := w.step(AfterTempWrite, path); err != nil {
		return f, err
	}
	if w.sync() {
		if err := fdatasync(f.f); err != nil {
			return f, fmt.Errorf("checkpoint: fdatasync %s: %w", path, err)
		}
		if fresh {
			if err := syncDir(dir); err != nil {
				return f, err
			}
		}
	}
	if err := w.step(AfterRename, path); err != nil {
		return f, err
	}
	return f, nil
}
