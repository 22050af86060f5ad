package checkpoint

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// The state log (statelog.go) keeps the deltas of every state partition
// of a query that changed in an epoch in one record, appended to segment
// files <checkpoint>/state/_log/<first version>.seg. This file is the byte
// format of one segment:
//
//	header   "ASSL" | uint32 format version (1) | int64 first version of
//	         the previous segment (-1: none) | int64 first version of the
//	         log's first segment ever (the log covers versions from it)
//	record*  uint32 payload length | uint32 CRC-32C of payload | payload
//	payload  int64 version | uint32 entry count | entry*
//	entry    uint32 path length | path | uint32 delta length | delta
//
// Integers are little-endian. A record holds the changes that produce one
// state version (the epoch's id + 1); a partition absent from it did not
// change. path names the partition relative to the state directory
// ("<operator>/<partition>"); delta is a state file's bytes exactly as a
// <version>.delta file holds them (sealed: it carries its own checksum).
// The previous segment's first version chains the segments, so that a
// missing segment between two others is reported instead of its
// partitions' changes being read as "unchanged". Retention drops old
// segments only when no partition needs their entries (StateLog.Purge),
// so the log stays authoritative from its first version on.

// StateLogFormatVersion is the state log segment format this build writes
// and reads.
const StateLogFormatVersion = 1

var stateLogMagic = [4]byte{'A', 'S', 'S', 'L'}

const (
	stateLogHeaderLen = 24
	// maxStateRecordLen bounds one record's payload: a larger length is
	// damage, not a record to allocate.
	maxStateRecordLen = 1 << 31
	maxStatePathLen   = 4 << 10
)

// stateLogEntry locates one partition's delta inside a segment.
type stateLogEntry struct {
	path string // the partition, relative to the state directory
	off  int64  // offset of the delta's bytes in the segment file
	n    int64  // the delta's length
}

// stateLogRecord is one decoded record.
type stateLogRecord struct {
	version int64
	off     int64 // the record's offset in the segment (its frame)
	end     int64 // the offset just past it
	entries []stateLogEntry
}

// StateDelta is one partition's delta to append (StateLog.Append).
type StateDelta struct {
	// Path names the partition relative to the state directory:
	// "<operator>/<partition>" (StatePartitionPath).
	Path string
	// Raw is the delta's bytes, in the provider's own format.
	Raw []byte
	// enc, when set instead of Raw, appends the delta's bytes: a
	// changelog partition's epoch is encoded straight into the record
	// (no delta of its own to copy in).
	enc deltaEncoder
}

// deltaEncoder writes a delta into the record that holds it.
type deltaEncoder interface {
	// appendDelta appends the delta's bytes to dst, and to sums (when not
	// nil) the spans of them it computed a checksum of.
	appendDelta(dst []byte, sums *crcSpans) []byte
	// deltaLen bounds what appendDelta appends.
	deltaLen() int
}

// rawLen bounds the delta's length.
func (d *StateDelta) rawLen() int {
	if d.enc != nil {
		return d.enc.deltaLen()
	}
	return len(d.Raw)
}

func appendStateLogHeader(dst []byte, prevFirst, coverStart int64) []byte {
	dst = append(dst, stateLogMagic[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, StateLogFormatVersion)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(prevFirst))
	return binary.LittleEndian.AppendUint64(dst, uint64(coverStart))
}

// appendStateRecord appends the framed record of version to dst (lens as
// appendStatePayload's).
func appendStateRecord(dst []byte, version int64, deltas []StateDelta, lens []int64) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // length, set below
	dst = binary.LittleEndian.AppendUint32(dst, 0) // checksum, set below
	var sums crcSpans
	dst = appendStatePayload(dst, version, deltas, lens, &sums)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-recordHeaderLen))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32cWith(dst, start+recordHeaderLen, &sums))
	return dst
}

// appendStatePayload appends a state record's payload (version, entry
// count, entries) to dst. When lens is not nil, lens[i] is set to the
// length of deltas[i]'s bytes in the record. The deltas encoded in place
// add the spans they checksummed to sums (when not nil).
func appendStatePayload(dst []byte, version int64, deltas []StateDelta, lens []int64, sums *crcSpans) []byte {
	dst = slices.Grow(dst, statePayloadLen(deltas))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(version))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(deltas)))
	for i := range deltas {
		d := &deltas[i]
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(d.Path)))
		dst = append(dst, d.Path...)
		at := len(dst)
		dst = binary.LittleEndian.AppendUint32(dst, 0) // length, set below
		if d.enc != nil {
			dst = d.enc.appendDelta(dst, sums)
		} else {
			dst = append(dst, d.Raw...)
		}
		dl := len(dst) - at - 4
		binary.LittleEndian.PutUint32(dst[at:], uint32(dl))
		if lens != nil {
			lens[i] = int64(dl)
		}
	}
	return dst
}

// statePayloadLen is the length appendStatePayload appends.
func statePayloadLen(deltas []StateDelta) int {
	n := 12
	for i := range deltas {
		n += 8 + len(deltas[i].Path) + deltas[i].rawLen()
	}
	return n
}

// stateSegmentDecode is the result of decoding one state log segment.
type stateSegmentDecode struct {
	prevFirst, coverStart int64
	records               []stateLogRecord
	// valid is the length of the header and the whole, checked records.
	valid int64
	// torn describes incomplete bytes after valid (a crash during an
	// append); damage anywhere but at the end of the newest segment.
	torn string
}

// decodeStateSegment checks a state log segment and indexes its records
// without copying the deltas. path names the file in errors; every error
// wraps ErrCorrupt (or ErrNewerFormat) and names the offset.
func decodeStateSegment(path string, data []byte) (stateSegmentDecode, error) {
	out := stateSegmentDecode{prevFirst: -1}
	if len(data) < stateLogHeaderLen {
		// A segment is created with its header in one write: a shorter
		// file is a crash before that write completed.
		out.torn = fmt.Sprintf("%d-byte file shorter than the segment header", len(data))
		return out, nil
	}
	if [4]byte(data[:4]) != stateLogMagic {
		return out, fmt.Errorf("checkpoint: %s: not a state log segment (magic %q): %w", path, data[:4], ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != StateLogFormatVersion {
		if v > StateLogFormatVersion {
			return out, newerFormat(path, "state log", int(v), StateLogFormatVersion)
		}
		return out, fmt.Errorf("checkpoint: %s: unknown state log format v%d: %w", path, v, ErrCorrupt)
	}
	out.prevFirst = int64(binary.LittleEndian.Uint64(data[8:16]))
	out.coverStart = int64(binary.LittleEndian.Uint64(data[16:24]))
	if out.prevFirst < -1 || out.coverStart <= 0 {
		return out, fmt.Errorf("checkpoint: %s: bad header (previous segment %d, log start %d): %w", path, out.prevFirst, out.coverStart, ErrCorrupt)
	}
	off := int64(stateLogHeaderLen)
	out.valid = off
	end := int64(len(data))
	for off < end {
		if end-off < recordHeaderLen {
			out.torn = fmt.Sprintf("%d bytes of a record header at offset %d", end-off, off)
			return out, nil
		}
		n := int64(binary.LittleEndian.Uint32(data[off:]))
		want := binary.LittleEndian.Uint32(data[off+4:])
		if n < 12 || n > maxStateRecordLen {
			if allZero(data[off:]) {
				out.torn = fmt.Sprintf("%d zero bytes at offset %d", end-off, off)
				return out, nil
			}
			return out, fmt.Errorf("checkpoint: %s: record at offset %d has impossible length %d: %w", path, off, n, ErrCorrupt)
		}
		if off+recordHeaderLen+n > end {
			out.torn = fmt.Sprintf("record at offset %d needs %d bytes, %d remain", off, recordHeaderLen+n, end-off-recordHeaderLen)
			return out, nil
		}
		pstart := off + recordHeaderLen
		payload := data[pstart : pstart+n]
		if got := crc32c(payload); got != want {
			if pstart+n == end {
				out.torn = fmt.Sprintf("last record at offset %d fails its checksum", off)
				return out, nil
			}
			return out, fmt.Errorf("checkpoint: %s: record at offset %d: checksum mismatch (record has %08x, content gives %08x): %w", path, off, want, got, ErrCorrupt)
		}
		rec, err := parseStateRecord(payload, pstart)
		if err != nil {
			return out, fmt.Errorf("checkpoint: %s: record at offset %d: %v: %w", path, off, err, ErrCorrupt)
		}
		rec.off, rec.end = off, pstart+n
		out.records = append(out.records, rec)
		off = pstart + n
		out.valid = off
	}
	return out, nil
}

// parseStateRecord parses a checked payload that starts at offset base of
// its file.
func parseStateRecord(p []byte, base int64) (stateLogRecord, error) {
	var rec stateLogRecord
	rec.version = int64(binary.LittleEndian.Uint64(p))
	if rec.version <= 0 {
		return rec, fmt.Errorf("bad version %d", rec.version)
	}
	count := binary.LittleEndian.Uint32(p[8:])
	pos := int64(12)
	seen := make(map[string]bool, min(count, 1<<10))
	for i := uint32(0); i < count; i++ {
		if int64(len(p))-pos < 4 {
			return rec, fmt.Errorf("entry %d of %d runs past the record", i, count)
		}
		pl := int64(binary.LittleEndian.Uint32(p[pos:]))
		pos += 4
		if pl == 0 || pl > maxStatePathLen || int64(len(p))-pos < pl+4 {
			return rec, fmt.Errorf("entry %d has a bad path length %d", i, pl)
		}
		path := string(p[pos : pos+pl])
		pos += pl
		if !validStatePath(path) {
			return rec, fmt.Errorf("entry %d has a bad partition path %q", i, path)
		}
		if seen[path] {
			return rec, fmt.Errorf("partition %s appears twice", path)
		}
		seen[path] = true
		dl := int64(binary.LittleEndian.Uint32(p[pos:]))
		pos += 4
		if int64(len(p))-pos < dl {
			return rec, fmt.Errorf("delta of %s runs past the record (%d bytes)", path, dl)
		}
		rec.entries = append(rec.entries, stateLogEntry{path: path, off: base + pos, n: dl})
		pos += dl
	}
	if pos != int64(len(p)) {
		return rec, fmt.Errorf("%d bytes after the last entry", int64(len(p))-pos)
	}
	return rec, nil
}

// validStatePath accepts "<operator>/<partition>" names: a damaged path
// must not alias another partition's directory.
func validStatePath(path string) bool {
	op, part, ok := strings.Cut(path, "/")
	if !ok {
		return false
	}
	_, ok1 := parseEpochName(op)
	_, ok2 := parseEpochName(part)
	return ok1 && ok2
}
