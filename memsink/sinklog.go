package memsink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// A persisting table appends its epochs (and its view snapshots) to a log
// of segment files in <checkpoint>/sinks/memory, <seq>.seg, rather than
// writing a file per epoch: a file per epoch cost a create, a write, an
// fsync, a rename and a directory fsync (about 0.7 CPU-ms of a 1.6 ms
// cluster epoch, docs/cluster.md), an append costs one pwrite and one
// fdatasync. The byte format of a segment:
//
//	header   "ASML" | uint32 format version (1)
//	record*  uint64 payload length | uint32 CRC-32C of payload | "ASMR" | payload
//	payload  kind byte ('E' epoch, 'V' view snapshot) | int64 epoch | Arrow IPC stream
//
// Integers are little-endian. The IPC stream is what a per-epoch file of
// earlier builds held before its trailer (its schema metadata names the
// epoch, its predecessor and its base), so recovery walks the same chain
// whichever kind of storage holds each link: a directory of per-epoch
// files, one of segments, or old files followed by segments (a checkpoint
// written by an earlier build and continued by this one).
//
// A record is durable before AddBatch returns, so before the engine writes
// the commit record naming its epoch. A crash during an append leaves a
// torn tail in the newest segment: recovery cuts it back to the last whole
// record (that epoch was never committed; the engine runs it again). A
// record that fails its checks with more bytes after it is damage: an
// error naming the file and the offset. A new segment starts when the
// current one passes segmentBytes; a segment is deleted once none of its
// records is in the table's chain (superseded or evicted), so trimming
// never lists the directory.

const (
	logExt          = ".seg"
	logFormat       = 1
	logHeaderLen    = 8
	logRecHeaderLen = 16
	logRecFixedLen  = 1 + 8 // kind + epoch
	// defaultSegmentBytes is the size past which a new segment starts:
	// large enough that segments are created rarely (each costs a create
	// and a directory fsync), small enough that superseded epochs are
	// dropped soon after a view snapshot or an eviction.
	defaultSegmentBytes = 8 << 20
)

var (
	logMagic    = [4]byte{'A', 'S', 'M', 'L'}
	logRecMagic = [4]byte{'A', 'S', 'M', 'R'}
)

func logSegmentName(seq int64) string { return strconv.FormatInt(seq, 10) + logExt }

// parseLogSegmentName accepts only the names logSegmentName produces.
func parseLogSegmentName(name string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, logExt)
	if !ok || stem == "" || strings.TrimLeft(stem, "0123456789") != "" || len(stem) > 1 && stem[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(stem, 10, 64)
	return n, err == nil
}

// logRecord is a record found in a segment.
type logRecord struct {
	view  bool
	epoch int64
	off   int64 // of the record's frame in the file
	ipc   int64 // of its IPC stream in the file
	n     int64 // IPC bytes
}

// name is the per-epoch file name the record stands for in the chain.
func (r logRecord) name() string {
	if r.view {
		return viewFile(r.epoch)
	}
	return epochFile(r.epoch)
}

// logScan is the result of decoding one segment's bytes.
type logScan struct {
	records []logRecord
	// valid is the length of the prefix made of the header and whole,
	// checked records.
	valid int64
	// torn describes the bytes after valid when they are an incomplete or
	// unchecked last record (what a crash during an append leaves); it is
	// damage anywhere but at the end of the newest segment.
	torn string
}

// decodeLogSegment checks a segment's bytes and lists its records. path
// names the file in errors, which wrap checkpoint.ErrCorrupt (and
// checkpoint.ErrNewerFormat for a later format).
func decodeLogSegment(path string, data []byte) (logScan, error) {
	var out logScan
	if len(data) < logHeaderLen {
		// A segment is created with its header and first record in one
		// write: a shorter file is a crash before that write completed.
		out.torn = fmt.Sprintf("%d-byte file shorter than the segment header", len(data))
		return out, nil
	}
	if [4]byte(data[:4]) != logMagic {
		return out, fmt.Errorf("%s: not a memory sink log segment (magic %q): %w", path, data[:4], checkpoint.ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != logFormat {
		if v > logFormat {
			return out, fmt.Errorf("%s: written in memory sink log format v%d, this build reads up to v%d; upgrade Arrowstream to read it: %w (%w)",
				path, v, logFormat, checkpoint.ErrNewerFormat, checkpoint.ErrCorrupt)
		}
		return out, fmt.Errorf("%s: unknown memory sink log format v%d: %w", path, v, checkpoint.ErrCorrupt)
	}
	off := int64(logHeaderLen)
	out.valid = off
	end := int64(len(data))
	for off < end {
		rest := data[off:]
		if allZero(rest) {
			// The file grew but the append's bytes never reached the disk.
			out.torn = fmt.Sprintf("%d zero bytes at offset %d", len(rest), off)
			return out, nil
		}
		if len(rest) < logRecHeaderLen {
			out.torn = fmt.Sprintf("%d bytes of a record header at offset %d", len(rest), off)
			return out, nil
		}
		n := binary.LittleEndian.Uint64(rest)
		want := binary.LittleEndian.Uint32(rest[8:])
		if [4]byte(rest[12:16]) != logRecMagic || n < logRecFixedLen {
			return out, fmt.Errorf("%s: record at offset %d: bad frame (length %d, marker %q): %w", path, off, n, rest[12:16], checkpoint.ErrCorrupt)
		}
		if n > uint64(len(rest)-logRecHeaderLen) {
			out.torn = fmt.Sprintf("record at offset %d needs %d bytes, %d remain", off, n, len(rest)-logRecHeaderLen)
			return out, nil
		}
		payload := rest[logRecHeaderLen : logRecHeaderLen+int(n)]
		if got := crc32.Checksum(payload, castagnoli); got != want {
			if off+logRecHeaderLen+int64(n) == end {
				out.torn = fmt.Sprintf("last record at offset %d fails its checksum", off)
				return out, nil
			}
			return out, fmt.Errorf("%s: record at offset %d: checksum mismatch (record has %08x, content gives %08x): %w", path, off, want, got, checkpoint.ErrCorrupt)
		}
		rec := logRecord{epoch: int64(binary.LittleEndian.Uint64(payload[1:9])), off: off, ipc: off + logRecHeaderLen + logRecFixedLen, n: int64(n) - logRecFixedLen}
		switch payload[0] {
		case 'E':
		case 'V':
			rec.view = true
		default:
			return out, fmt.Errorf("%s: record at offset %d has unknown kind %q: %w", path, off, payload[0], checkpoint.ErrCorrupt)
		}
		if rec.epoch < 0 {
			return out, fmt.Errorf("%s: record at offset %d has negative epoch %d: %w", path, off, rec.epoch, checkpoint.ErrCorrupt)
		}
		out.records = append(out.records, rec)
		off += logRecHeaderLen + int64(n)
		out.valid = off
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// logSegment is one segment file of the log.
type logSegment struct {
	seq  int64
	path string
	size int64 // bytes written (the file's length)
	// live counts the records of the segment that are the current copy of
	// an entry of the table's chain; at 0 the segment is deleted (unless
	// it is the one appended to).
	live int
}

// logLoc is where a chain entry's record lies.
type logLoc struct {
	seg     *logSegment
	ipc, n  int64
	frameAt int64
}

// sinkLog is the table's log. It is used under the table's writer lock.
type sinkLog struct {
	dir  string
	w    *checkpoint.Writer
	segs []*logSegment // oldest first; the last is appended to
	// active is the last segment, open for appending (nil until needed).
	active *os.File
	at     map[string]logLoc // chain entries held by the log
	// nextSeq is the sequence number of the next segment: it only grows,
	// so a name is never reused within a process, even after clear.
	nextSeq      int64
	segmentBytes int64
	// buf is the encode buffer, kept across epochs: only this log reads
	// it (the bytes go to the file, nothing else keeps a reference), and
	// every append resets it first.
	buf []byte
	// bufPeak is the largest record encoded in the current window of
	// keptBufWindow appends; appends counts the appends (keep).
	bufPeak int
	appends int
}

func newSinkLog(dir string, w *checkpoint.Writer) *sinkLog {
	return &sinkLog{dir: dir, w: w, at: map[string]logLoc{}, segmentBytes: defaultSegmentBytes}
}

func (l *sinkLog) syncs() bool { return l.w == nil || !l.w.NoSync }

func (l *sinkLog) step(s checkpoint.WriteStep, path string) error {
	if l.w == nil || l.w.Hook == nil {
		return nil
	}
	if err := l.w.Hook(s, path); err != nil {
		return fmt.Errorf("append to %s aborted %s: %w", path, s, err)
	}
	return nil
}

// frameStart returns the encode buffer reset, with room for a segment
// header and a record header before the IPC bytes the caller appends.
func (l *sinkLog) frameStart() []byte {
	const n = logHeaderLen + logRecHeaderLen + logRecFixedLen
	b := slices.Grow(l.buf[:0], n)[:n]
	clear(b)
	return b
}

// The encode buffer kept between epochs is bounded twice: never past
// maxKeptBuf, and given back when, over keptBufWindow appends, no record
// needed half of it, so that one large epoch does not pin its size for
// the table's life. Below the bound an epoch's record is encoded into
// memory written before, whatever its size: a buffer dropped and grown
// again by doubling every epoch (past the former bound of 4 MiB, which
// an LZ4 record of 150K bid-like rows, 3.8 MB, nearly fills) is fresh
// pages each time, at 13–17 µs per 4 KiB here (docs/cluster.md, session
// 29).
const (
	maxKeptBuf    = 16 << 20
	keptBufWindow = 32
)

// keep decides whether buf, the encode buffer an append just used, is
// kept for the next one.
func (l *sinkLog) keep(buf []byte) {
	l.bufPeak = max(l.bufPeak, len(buf))
	l.appends++
	shrink := false
	if l.appends%keptBufWindow == 0 {
		shrink = cap(buf) > 2*l.bufPeak
		l.bufPeak = 0
	}
	if cap(buf) > maxKeptBuf || shrink {
		l.buf = nil
		return
	}
	l.buf = buf[:0]
}

// append durably appends the record name (epoch or view snapshot of
// epoch) whose IPC stream follows the reserved prefix of buf (from
// frameStart). On failure nothing of it remains in the log.
func (l *sinkLog) append(name string, view bool, epoch int64, buf []byte) error {
	l.keep(buf)
	var cur *logSegment
	if n := len(l.segs); n > 0 {
		cur = l.segs[n-1]
	}
	fresh := cur == nil || cur.size >= l.segmentBytes
	payload := buf[logHeaderLen+logRecHeaderLen:]
	kind := byte('E')
	if view {
		kind = 'V'
	}
	payload[0] = kind
	binary.LittleEndian.PutUint64(payload[1:9], uint64(epoch))
	hdr := buf[logHeaderLen : logHeaderLen+logRecHeaderLen]
	binary.LittleEndian.PutUint64(hdr, uint64(len(payload)))
	binary.LittleEndian.PutUint32(hdr[8:], crc32.Checksum(payload, castagnoli))
	copy(hdr[12:], logRecMagic[:])
	out := buf[logHeaderLen:]
	if fresh {
		copy(buf, logMagic[:])
		binary.LittleEndian.PutUint32(buf[4:], logFormat)
		out = buf
		if err := l.startSegment(); err != nil {
			return err
		}
		cur = l.segs[len(l.segs)-1]
	} else if err := l.openActive(cur); err != nil {
		return err
	}
	at := cur.size
	if err := l.write(cur, out, at, fresh); err != nil {
		// Cut what the append may have left, so that a retry appends
		// after the last whole record; if even that fails the file is
		// closed and cut when next opened (openActive).
		if l.active.Truncate(at) != nil || at == 0 {
			l.closeActive()
		}
		if at == 0 {
			os.Remove(cur.path)
			l.segs = l.segs[:len(l.segs)-1]
		}
		return err
	}
	cur.size = at + int64(len(out))
	ipcAt := cur.size - int64(len(payload)) + logRecFixedLen
	l.put(name, logLoc{seg: cur, ipc: ipcAt, n: int64(len(payload)) - logRecFixedLen, frameAt: ipcAt - logRecFixedLen - logRecHeaderLen})
	return nil
}

// write writes out at off and makes it durable: one pwrite and one
// fdatasync (a new segment also syncs its directory entry).
func (l *sinkLog) write(seg *logSegment, out []byte, off int64, fresh bool) error {
	if err := l.step(checkpoint.BeforeTempWrite, seg.path); err != nil {
		return err
	}
	if _, err := l.active.WriteAt(out, off); err != nil {
		return fmt.Errorf("append to %s: %w", seg.path, err)
	}
	if err := l.step(checkpoint.AfterTempWrite, seg.path); err != nil {
		return err
	}
	if l.syncs() {
		if err := checkpoint.Fdatasync(l.active); err != nil {
			return fmt.Errorf("fdatasync %s: %w", seg.path, err)
		}
		if fresh {
			if err := syncDir(l.dir); err != nil {
				return err
			}
		}
	}
	return l.step(checkpoint.AfterRename, seg.path)
}

// put records that name's current copy is at loc.
func (l *sinkLog) put(name string, loc logLoc) {
	if old, ok := l.at[name]; ok {
		// A rewrite of an entry (an epoch retried after Clear): the older
		// copy no longer counts.
		l.release(old.seg)
	}
	loc.seg.live++
	l.at[name] = loc
}

// drop forgets name (superseded or evicted); a segment left without
// live records is deleted. It reports whether the log held name.
func (l *sinkLog) drop(name string, logf func(path string, err error)) bool {
	loc, ok := l.at[name]
	if !ok {
		return false
	}
	delete(l.at, name)
	if seg := l.release(loc.seg); seg != "" {
		if err := os.Remove(seg); err != nil && !errors.Is(err, fs.ErrNotExist) {
			logf(seg, err)
		}
	}
	return true
}

// release decrements seg's live records and, when none is left and seg
// is not appended to, unlists it and returns its path for deletion.
func (l *sinkLog) release(seg *logSegment) string {
	seg.live--
	if seg.live > 0 || len(l.segs) > 0 && l.segs[len(l.segs)-1] == seg {
		return ""
	}
	for i, s := range l.segs {
		if s == seg {
			l.segs = append(l.segs[:i], l.segs[i+1:]...)
			break
		}
	}
	return seg.path
}

// startSegment creates the next segment (O_EXCL: a name is never reused)
// and makes it the active one. The segment it follows is closed, and
// deleted when none of its records is live.
func (l *sinkLog) startSegment() error {
	if err := l.w.MkdirAll(l.dir); err != nil {
		return err
	}
	path := filepath.Join(l.dir, logSegmentName(l.nextSeq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	l.nextSeq++
	l.closeActive()
	if n := len(l.segs); n > 0 && l.segs[n-1].live == 0 {
		os.Remove(l.segs[n-1].path)
		l.segs = l.segs[:n-1]
	}
	l.segs = append(l.segs, &logSegment{seq: l.nextSeq - 1, path: path})
	l.active = f
	return nil
}

// openActive opens seg, the newest segment, for appending: its length
// must be the one recorded; bytes after it are an append that failed and
// are cut.
func (l *sinkLog) openActive(seg *logSegment) error {
	if l.active != nil {
		return nil
	}
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", seg.path, err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() != seg.size {
		if st.Size() < seg.size {
			err = fmt.Errorf("%d bytes, %d were written: %w", st.Size(), seg.size, checkpoint.ErrCorrupt)
		} else if err = f.Truncate(seg.size); err == nil && l.syncs() {
			err = checkpoint.Fdatasync(f)
		}
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("open %s: %w", seg.path, err)
	}
	l.active = f
	return nil
}

func (l *sinkLog) closeActive() {
	if l.active != nil {
		l.active.Close()
		l.active = nil
	}
}

// readIPC reads the IPC stream of the record at loc.
func (l *sinkLog) readIPC(loc logLoc) ([]byte, error) {
	f, err := os.Open(loc.seg.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, loc.n)
	if _, err := f.ReadAt(b, loc.ipc); err != nil {
		return nil, fmt.Errorf("read %d bytes at %d: %w", loc.n, loc.ipc, err)
	}
	return b, nil
}

// where names the file and offset of a log record in errors.
func (loc logLoc) where() string {
	return fmt.Sprintf("%s (record at offset %d)", loc.seg.path, loc.frameAt)
}

// clear deletes every segment.
func (l *sinkLog) clear() error {
	l.closeActive()
	for _, s := range l.segs {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	l.segs = nil
	clear(l.at)
	return nil
}

// syncDir fsyncs a directory so that a file created in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
