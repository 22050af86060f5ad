package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// State files of format v2 hold the two state columns (key, value; a null
// value is a delete) as their Arrow buffers, without the IPC stream's
// framing: the schema and record-batch flatbuffers of an IPC stream,
// written and parsed for every delta of every partition, were most of the
// cost of committing a small delta, and the IPC reader's allocation and
// validation most of loading one. The body of a v2 file is
//
//	"ASC2" | codec byte (0: stored, 1: S2 block) | payload
//
// and the payload, decompressed, is a sequence of chunks, each
//
//	rows u32 | key bytes u32 | value bytes u32 |
//	key offsets (rows+1) × u32 | value offsets (rows+1) × u32 |
//	value validity bitmap ((rows+7)/8 bytes, LSB first, Arrow's) |
//	key data | value data
//
// all little-endian: the layout of an Arrow binary column, so that a chunk
// is written by copying a changelog's builder buffers. The compressor is
// S2 (klauspost/compress/s2, a faster Snappy): several times faster than
// zstd's fastest level on state and skipping incompressible data (join
// rows' random strings) quickly; files of v1 (an IPC stream, plain or in
// one zstd frame, or with IPC-compressed buffers) are still read.
//
// stateTrailer adds the CRC-32C trailer, as to every state file. A later
// format is expected to start "ASC" and its version digit: this build
// refuses such a file as newer (ErrNewerFormat) rather than as damaged.

// stateColumnsMagic starts a v2 body. An IPC stream starts with 0xFFFFFFFF
// and a zstd frame with 28 b5 2f fd, so the three never collide.
var stateColumnsMagic = []byte("ASC2")

const (
	stateCodecStored = 0
	stateCodecS2     = 1
)

// stateChunkRows bounds a chunk's rows (and so its 32-bit offsets' reach,
// with stateChunkBytes bounding its data).
const (
	stateChunkRows  = 64 << 10
	stateChunkBytes = 1 << 30
)

// stateChunks writes the entries of a state file body as chunks. Entries
// are added in order (they reference the caller's bytes until done); each
// chunk is written in one pass into a body grown once to its size, so
// that a value's bytes are copied once before compression.
type stateChunks struct {
	buf    []byte // the body so far, up to the open chunk
	ents   []stateEntry
	kn, vn int // key and value bytes of ents
	// m counts buf's and ents' capacities while pooled
	// (shared_buffers.go).
	m sharedMeter
}

type stateEntry struct {
	key     string
	value   []byte
	deleted bool
}

// stateEncoders recycles the encoders' bodies and entry lists across
// files.
var stateEncoders = sync.Pool{New: func() any {
	c := new(stateChunks)
	c.m = newSharedMeter(c)
	return c
}}

// newStateChunks takes a recycled encoder, its body started; put it back
// with release once its body is no longer used.
func newStateChunks() *stateChunks {
	c := stateEncoders.Get().(*stateChunks)
	c.buf = append(append(c.buf[:0], stateColumnsMagic...), stateCodecStored)
	return c
}

func (c *stateChunks) release() {
	clear(c.ents)
	c.ents, c.kn, c.vn = c.ents[:0], 0, 0
	c.buf = c.buf[:0]
	c.m.note(cap(c.buf) + cap(c.ents)*stateEntrySize)
	stateEncoders.Put(c)
}

// add appends an entry; deleted ignores value.
func (c *stateChunks) add(key string, value []byte, deleted bool) {
	if deleted {
		value = nil
	}
	if len(c.ents) == stateChunkRows || c.kn+c.vn+len(key)+len(value) > stateChunkBytes && len(c.ents) > 0 {
		c.flush()
	}
	c.ents = append(c.ents, stateEntry{key, value, deleted})
	c.kn += len(key)
	c.vn += len(value)
}

// flush writes the open chunk.
func (c *stateChunks) flush() {
	n := len(c.ents)
	if n == 0 {
		return
	}
	c.buf = slices.Grow(c.buf, 12+8*(n+1)+(n+7)/8+c.kn+c.vn)
	c.buf = appendChunkHeader(c.buf, n, c.kn, c.vn)
	off := uint32(0)
	c.buf = binary.LittleEndian.AppendUint32(c.buf, 0)
	for _, e := range c.ents {
		off += uint32(len(e.key))
		c.buf = binary.LittleEndian.AppendUint32(c.buf, off)
	}
	off = 0
	c.buf = binary.LittleEndian.AppendUint32(c.buf, 0)
	for _, e := range c.ents {
		off += uint32(len(e.value))
		c.buf = binary.LittleEndian.AppendUint32(c.buf, off)
	}
	for i := 0; i < n; i += 8 {
		var bits byte
		for j, e := range c.ents[i:min(i+8, n)] {
			if !e.deleted {
				bits |= 1 << j
			}
		}
		c.buf = append(c.buf, bits)
	}
	for _, e := range c.ents {
		c.buf = append(c.buf, e.key...)
	}
	for _, e := range c.ents {
		c.buf = append(c.buf, e.value...)
	}
	clear(c.ents)
	c.ents, c.kn, c.vn = c.ents[:0], 0, 0
}

func appendChunkHeader(dst []byte, rows, keyBytes, valBytes int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(rows))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(keyBytes))
	return binary.LittleEndian.AppendUint32(dst, uint32(valBytes))
}

// done finishes the body and returns the sealed file.
func (c *stateChunks) done() ([]byte, error) {
	c.flush()
	return sealColumns(c.buf)
}

// encodeStateMap writes every entry of data as a state file, in the map's
// order (a snapshot's order does not matter to loading).
func encodeStateMap(data map[string][]byte) ([]byte, error) {
	c := newStateChunks()
	defer c.release()
	// The body's size is known up front: one allocation, not a doubling
	// copy of a growing snapshot (fresh pages each time: at 1.6M events
	// of q20 the growth cost a fifth of the compaction).
	size := 0
	for k, v := range data {
		size += len(k) + len(v) + 9 // two offsets and a validity bit
	}
	chunks := size/stateChunkBytes + len(data)/stateChunkRows + 2
	c.buf = slices.Grow(c.buf, size+chunks*32)
	for k, v := range data {
		c.add(k, v, false)
	}
	return c.done()
}

// sealColumns compresses a v2 body (magic, codec byte, chunks) when it is
// large enough to gain, and adds the trailer. body is not kept.
func sealColumns(body []byte) ([]byte, error) {
	const head = 5
	if len(body) < stateCompressMin {
		out := make([]byte, 0, len(body)+8)
		return stateTrailer(append(out, body...)), nil
	}
	payload := body[head:]
	if !worthCompressing(payload) {
		out := make([]byte, 0, len(body)+8)
		return stateTrailer(append(out, body...)), nil
	}
	out := make([]byte, head, head+s2.MaxEncodedLen(len(payload))+8)
	copy(out, stateColumnsMagic)
	out[4] = stateCodecS2
	out = append(out, s2.Encode(out[head:cap(out)], payload)...)
	return stateTrailer(out), nil
}

// sealColumnsOwned is sealColumns for a body the caller gives up: stored
// as it is, its trailer is appended in place (no copy of a large body).
func sealColumnsOwned(body []byte) ([]byte, error) {
	if len(body) < stateCompressMin || !worthCompressing(body[5:]) {
		return stateTrailer(body), nil
	}
	return sealColumns(body)
}

// Compression of a large payload is decided on a sample: the rows a join
// keeps (random strings padding the events, already-compact columns) gain
// almost nothing from S2, whose pass over them cost as much as writing
// them.
const (
	compressSampleMin = 256 << 10 // payloads from this size are sampled
	compressSample    = 32 << 10
)

// worthCompressing reports whether S2 shrinks a sample from the middle of
// payload by at least a tenth (every payload under compressSampleMin is
// compressed).
func worthCompressing(payload []byte) bool {
	if len(payload) < compressSampleMin {
		return true
	}
	mid := len(payload)/2 - compressSample/2
	sample := payload[mid : mid+compressSample]
	scratch := getScratch()
	defer putScratch(scratch)
	enc := s2.Encode(scratch.b[:cap(scratch.b)], sample)
	scratch.b = enc[:0]
	return len(enc) < len(sample)*9/10
}

// stateTrailerFrom appends the trailer of the state file that starts at
// dst[start:], and adds the span it checksummed to sums (when not nil).
func stateTrailerFrom(dst []byte, start int, sums *crcSpans) []byte {
	var tr [8]byte
	sum := crc32.Checksum(dst[start:], castagnoli)
	sums.add(start, len(dst)-start, sum)
	binary.LittleEndian.PutUint32(tr[:4], sum)
	copy(tr[4:], stateMagic[:])
	return append(dst, tr[:]...)
}

// stateTrailer appends the trailer decodeState checks: the CRC-32C of
// body, then the state magic.
func stateTrailer(body []byte) []byte {
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(body, castagnoli))
	copy(tr[4:], stateMagic[:])
	return append(body, tr[:]...)
}

// stateBody checks a state file's trailer and returns the body before it.
func stateBody(raw []byte) ([]byte, error) {
	if len(raw) < 8 || !bytes.Equal(raw[len(raw)-4:], stateMagic[:]) {
		return nil, fmt.Errorf("missing trailer (truncated?): %w", ErrCorrupt)
	}
	body := raw[:len(raw)-8]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(raw[len(raw)-8:]); got != want {
		return nil, fmt.Errorf("checksum mismatch (file has %08x, content gives %08x): %w", want, got, ErrCorrupt)
	}
	return body, nil
}

// checkNewerColumns refuses the body of a columnar state file of a format
// newer than v2.
func checkNewerColumns(body []byte) error {
	if len(body) >= 4 && string(body[:3]) == "ASC" && body[3] > '2' && body[3] <= '9' {
		return fmt.Errorf("written in state format v%c, this build reads up to v%d; upgrade Arrowstream to read it: %w (%w)", body[3], StateFormatVersion, ErrNewerFormat, ErrCorrupt)
	}
	return nil
}

// decodeColumns applies a v2 body (the trailer checked and removed) to
// data: every key with a value is set (the value copied), every key
// without one deleted. maxBuffer bounds the decompressed payload.
func decodeColumns(body []byte, data map[string][]byte, maxBuffer int) error {
	return decodeColumnsInto(body, data, maxBuffer, false)
}

// decodeColumnsInto is decodeColumns; with alias, the keys and values set
// in data alias body or its decompressed payload instead of being copied
// (no allocation per entry), for a map that lives no longer than they do
// and is never modified in place: compaction's transient merge.
func decodeColumnsInto(body []byte, data map[string][]byte, maxBuffer int, alias bool) error {
	var scratch *[]byte
	if !alias {
		sb := getScratch()
		defer putScratch(sb)
		scratch = &sb.b
	}
	payload, err := columnsPayloadInto(body, maxBuffer, scratch)
	if err != nil {
		return err
	}
	if alias {
		return applyAliased(payload, data)
	}
	return walkChunks(payload, func(key, value []byte, ok bool) {
		if ok {
			data[string(key)] = bytes.Clone(value)
			if data[string(key)] == nil {
				data[string(key)] = []byte{}
			}
		} else {
			delete(data, string(key))
		}
	})
}

// applyAliased applies a v2 payload's entries to data, in order: keys
// and values alias payload (no copy, no allocation per entry), so
// payload must outlive data's use.
func applyAliased(payload []byte, data map[string][]byte) error {
	return walkChunks(payload, func(key, value []byte, ok bool) {
		k := unsafe.String(unsafe.SliceData(key), len(key))
		if ok {
			data[k] = value
		} else {
			delete(data, k)
		}
	})
}

// columnsPayloadInto returns the decompressed payload of a v2 body:
// into *scratch (grown as needed) when scratch is set, else into a buffer
// of its own that the entries walked from it may alias.
func columnsPayloadInto(body []byte, maxBuffer int, scratch *[]byte) ([]byte, error) {
	if len(body) < len(stateColumnsMagic)+1 {
		return nil, fmt.Errorf("state body of %d bytes: %w", len(body), ErrCorrupt)
	}
	codec, payload := body[4], body[5:]
	switch codec {
	case stateCodecStored:
		return payload, nil
	case stateCodecS2:
		n, err := s2.DecodedLen(payload)
		if err != nil || n > maxBuffer {
			return nil, fmt.Errorf("S2 block length unusable or over %d bytes: %w", maxBuffer, ErrCorrupt)
		}
		var buf []byte
		if scratch == nil {
			buf = make([]byte, n)
		} else {
			if cap(*scratch) < n {
				*scratch = make([]byte, n)
			}
			buf = (*scratch)[:n]
		}
		dec, err := s2.Decode(buf, payload)
		if err != nil {
			return nil, fmt.Errorf("S2: %v: %w", err, ErrCorrupt)
		}
		return dec, nil
	default:
		return nil, fmt.Errorf("unknown state codec %d: %w", codec, ErrCorrupt)
	}
}

// columnsPayload returns the payload of a state file of format v2 (its
// trailer checked), in a buffer of its own; v2 is false for a file of an
// older format.
func columnsPayload(raw []byte) (payload []byte, v2 bool, err error) {
	return columnsPayloadScratch(raw, nil)
}

// columnsPayloadScratch is columnsPayload decompressing into *scratch
// (grown as needed) when scratch is set.
func columnsPayloadScratch(raw []byte, scratch *[]byte) (payload []byte, v2 bool, err error) {
	body, err := stateBody(raw)
	if err != nil {
		return nil, false, err
	}
	if !bytes.HasPrefix(body, stateColumnsMagic) {
		return nil, false, checkNewerColumns(body)
	}
	payload, err = columnsPayloadInto(body, maxDecodeBuffer, scratch)
	return payload, err == nil, err
}

// walkChunks checks and walks the chunks of a payload, calling fn for
// every entry in order (ok false: a delete). key and value alias payload.
func walkChunks(payload []byte, fn func(key, value []byte, ok bool)) error {
	pos := 0
	for pos < len(payload) {
		if len(payload)-pos < 12 {
			return fmt.Errorf("state chunk header truncated at offset %d: %w", pos, ErrCorrupt)
		}
		rows := int(binary.LittleEndian.Uint32(payload[pos:]))
		kn := int(binary.LittleEndian.Uint32(payload[pos+4:]))
		vn := int(binary.LittleEndian.Uint32(payload[pos+8:]))
		pos += 12
		// Every length is checked against what remains before it is used,
		// in 64-bit arithmetic, so that no claimed size is trusted.
		need := 8*(int64(rows)+1) + (int64(rows)+7)/8 + int64(kn) + int64(vn)
		if rows == 0 || need > int64(len(payload)-pos) {
			return fmt.Errorf("state chunk at offset %d: %d rows, %d key and %d value bytes in %d bytes: %w", pos-12, rows, kn, vn, len(payload)-pos, ErrCorrupt)
		}
		ko := payload[pos : pos+4*(rows+1)]
		pos += 4 * (rows + 1)
		vo := payload[pos : pos+4*(rows+1)]
		pos += 4 * (rows + 1)
		valid := payload[pos : pos+(rows+7)/8]
		pos += (rows + 7) / 8
		kd := payload[pos : pos+kn]
		pos += kn
		vd := payload[pos : pos+vn]
		pos += vn
		if err := checkOffsets(ko, kn); err != nil {
			return fmt.Errorf("state chunk keys: %v: %w", err, ErrCorrupt)
		}
		if err := checkOffsets(vo, vn); err != nil {
			return fmt.Errorf("state chunk values: %v: %w", err, ErrCorrupt)
		}
		for i := range rows {
			k0, k1 := binary.LittleEndian.Uint32(ko[4*i:]), binary.LittleEndian.Uint32(ko[4*i+4:])
			if valid[i/8]&(1<<(i%8)) == 0 {
				fn(kd[k0:k1], nil, false)
				continue
			}
			v0, v1 := binary.LittleEndian.Uint32(vo[4*i:]), binary.LittleEndian.Uint32(vo[4*i+4:])
			fn(kd[k0:k1], vd[v0:v1:v1], true)
		}
	}
	return nil
}

// chunkTotals counts the entries of a payload (tombstones included) and
// their key and value bytes from its chunk headers, checking each
// chunk's claimed sizes against what remains as walkChunks does, without
// a call per entry (a segment's bookkeeping; its entries are checked
// when walked).
func chunkTotals(payload []byte) (entries, bytes int64, err error) {
	pos := 0
	for pos < len(payload) {
		if len(payload)-pos < 12 {
			return 0, 0, fmt.Errorf("state chunk header truncated at offset %d: %w", pos, ErrCorrupt)
		}
		rows := int64(binary.LittleEndian.Uint32(payload[pos:]))
		kn := int64(binary.LittleEndian.Uint32(payload[pos+4:]))
		vn := int64(binary.LittleEndian.Uint32(payload[pos+8:]))
		pos += 12
		need := 8*(rows+1) + (rows+7)/8 + kn + vn
		if rows == 0 || need > int64(len(payload)-pos) {
			return 0, 0, fmt.Errorf("state chunk at offset %d: %d rows, %d key and %d value bytes in %d bytes: %w", pos-12, rows, kn, vn, len(payload)-pos, ErrCorrupt)
		}
		pos += int(need)
		entries += rows
		bytes += kn + vn
	}
	return entries, bytes, nil
}

// checkOffsets checks that offsets start at 0, never decrease and end at
// n.
func checkOffsets(offs []byte, n int) error {
	prev := uint32(0)
	if binary.LittleEndian.Uint32(offs) != 0 {
		return fmt.Errorf("first offset %d, not 0", binary.LittleEndian.Uint32(offs))
	}
	for i := 4; i < len(offs); i += 4 {
		o := binary.LittleEndian.Uint32(offs[i:])
		if o < prev {
			return fmt.Errorf("offset %d decreases (%d after %d)", i/4, o, prev)
		}
		prev = o
	}
	if int(prev) != n {
		return fmt.Errorf("offsets end at %d, data holds %d bytes", prev, n)
	}
	return nil
}
