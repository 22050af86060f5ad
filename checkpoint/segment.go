package checkpoint

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The v2 epoch log keeps the offset and commit records of a query in
// append-only segment files (segmentlog.go). This file is the byte format
// of one segment:
//
//	header   "ASEG" | uint32 format version (2)
//	record*  uint32 payload length | uint32 CRC-32C of payload | payload
//	payload  kind byte ('O' offsets, 'C' commit, 'S' state) | int64 epoch | body
//
// Integers are little-endian. The body of an offsets or commit record is
// the same text an entry of the v1 per-epoch files holds (offsets.go),
// without the v1 version and checksum lines: the record frame carries
// both. A state record (epoch: the state version it produces) carries the
// state log's record for that version when the state log lives in the
// epoch log (statelog_epoch.go):
//
//	body     int64 first version the log covers | state payload
//
// where the state payload is a state log record's payload
// (statelog_format.go: version, entry count, entries).

// EpochLogFormatVersion is the segment format this build writes and reads.
const EpochLogFormatVersion = 2

var segmentMagic = [4]byte{'A', 'S', 'E', 'G'}

const (
	segmentHeaderLen = 8
	recordHeaderLen  = 8
	recordFixedLen   = 1 + 8 // kind + epoch
	// maxRecordLen bounds one record's payload: an offsets record holds a
	// few JSON lines; a larger length is damage, not a record to allocate.
	// A state record (its kind byte says so) may be as large as a state
	// log record (maxStateRecordLen).
	maxRecordLen = 64 << 20
)

// recordKind says which log a record belongs to.
type recordKind byte

const (
	kindOffsets recordKind = 'O'
	kindCommit  recordKind = 'C'
	kindState   recordKind = 'S'
)

func (k recordKind) String() string {
	switch k {
	case kindOffsets:
		return "offsets"
	case kindCommit:
		return "commit"
	case kindState:
		return "state"
	}
	return fmt.Sprintf("kind %q", byte(k))
}

// record is one decoded record of a segment.
type record struct {
	kind  recordKind
	epoch int64
	body  []byte
	off   int64 // decoded records: the body's offset in its file
	// build, when set instead of body, appends the body (a state record
	// encoded straight into the segment's write buffer).
	build func(dst []byte) []byte
	// size is the length of the body build appends (at most; 0 when not
	// known), so that the write buffer is sized before it is built.
	size int
	// sums, with build, collects the checksums build computed over parts
	// of the body (the deltas' trailers), which the record's checksum
	// combines instead of hashing those bytes again.
	sums *crcSpans
}

// appendSegmentHeader appends a segment's header to dst.
func appendSegmentHeader(dst []byte) []byte {
	dst = append(dst, segmentMagic[:]...)
	return binary.LittleEndian.AppendUint32(dst, EpochLogFormatVersion)
}

// appendRecord appends the framed record to dst.
func appendRecord(dst []byte, r record) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // length, set below
	dst = binary.LittleEndian.AppendUint32(dst, 0) // checksum, set below
	dst = append(dst, byte(r.kind))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.epoch))
	var sums *crcSpans
	if r.build != nil {
		// Only the spans of this build count (a record is built again
		// when it is appended again).
		sums = r.sums
		sums.reset()
		dst = r.build(dst)
	} else {
		dst = append(dst, r.body...)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-recordHeaderLen))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32cWith(dst, start+recordHeaderLen, sums))
	return dst
}

// segmentDecode is the result of decoding one segment's bytes.
type segmentDecode struct {
	records []record
	// valid is the length of the prefix made of the header and whole,
	// checked records.
	valid int64
	// torn is set when the bytes after valid are an incomplete or
	// unchecked last record: what a crash during an append leaves. It is
	// damage anywhere but at the end of the newest segment.
	torn string
}

// decodeSegment decodes a segment's bytes. path names the file in errors.
// A record whose frame runs past the end, or the last record whose
// checksum fails, is reported as torn (the normal crash case for the
// newest segment); a failed checksum or an impossible frame followed by
// more bytes is damage (ErrCorrupt naming the file and the offset). Record
// bodies alias data.
func decodeSegment(path string, data []byte) (segmentDecode, error) {
	var out segmentDecode
	if len(data) < segmentHeaderLen {
		// A segment is created with its header and first records in one
		// write: a shorter file is a crash before that write completed.
		out.torn = fmt.Sprintf("%d-byte file shorter than the segment header", len(data))
		return out, nil
	}
	if [4]byte(data[:4]) != segmentMagic {
		return out, fmt.Errorf("checkpoint: %s: not an epoch log segment (magic %q): %w", path, data[:4], ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != EpochLogFormatVersion {
		if v > EpochLogFormatVersion {
			return out, newerFormat(path, "epoch log", int(v), EpochLogFormatVersion)
		}
		return out, fmt.Errorf("checkpoint: %s: unknown epoch log format v%d: %w", path, v, ErrCorrupt)
	}
	off := int64(segmentHeaderLen)
	out.valid = off
	end := int64(len(data))
	for off < end {
		if end-off < recordHeaderLen {
			out.torn = fmt.Sprintf("%d bytes of a record header at offset %d", end-off, off)
			return out, nil
		}
		n := int64(binary.LittleEndian.Uint32(data[off:]))
		want := binary.LittleEndian.Uint32(data[off+4:])
		limit := int64(maxRecordLen)
		if end-off > recordHeaderLen && recordKind(data[off+recordHeaderLen]) == kindState {
			limit = maxStateRecordLen
		}
		if n < recordFixedLen || n > limit {
			if allZero(data[off:]) {
				// The file grew but the append's bytes never reached the
				// disk: a crash, not damage.
				out.torn = fmt.Sprintf("%d zero bytes at offset %d", end-off, off)
				return out, nil
			}
			return out, fmt.Errorf("checkpoint: %s: record at offset %d has impossible length %d: %w", path, off, n, ErrCorrupt)
		}
		if off+recordHeaderLen+n > end {
			out.torn = fmt.Sprintf("record at offset %d needs %d bytes, %d remain", off, recordHeaderLen+n, end-off-recordHeaderLen)
			return out, nil
		}
		payload := data[off+recordHeaderLen : off+recordHeaderLen+n]
		if got := crc32c(payload); got != want {
			if off+recordHeaderLen+n == end {
				out.torn = fmt.Sprintf("last record at offset %d fails its checksum", off)
				return out, nil
			}
			return out, fmt.Errorf("checkpoint: %s: record at offset %d: checksum mismatch (record has %08x, content gives %08x): %w", path, off, want, got, ErrCorrupt)
		}
		k := recordKind(payload[0])
		if k != kindOffsets && k != kindCommit && k != kindState {
			return out, fmt.Errorf("checkpoint: %s: record at offset %d has unknown kind %q: %w", path, off, payload[0], ErrCorrupt)
		}
		epoch := int64(binary.LittleEndian.Uint64(payload[1:9]))
		if epoch < 0 {
			return out, fmt.Errorf("checkpoint: %s: record at offset %d has negative epoch %d: %w", path, off, epoch, ErrCorrupt)
		}
		out.records = append(out.records, record{kind: k, epoch: epoch, body: payload[recordFixedLen:], off: off + recordHeaderLen + recordFixedLen})
		off += recordHeaderLen + n
		out.valid = off
	}
	return out, nil
}

// segmentName is the file name of the segment whose lowest epoch is first.
func segmentName(first int64) string { return fmt.Sprintf("%d%s", first, segmentExt) }

const segmentExt = ".seg"

// parseSegmentName returns the first epoch of a segment file name.
func parseSegmentName(name string) (int64, bool) {
	base, ok := strings.CutSuffix(name, segmentExt)
	if !ok {
		return 0, false
	}
	return parseEpochName(base)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
