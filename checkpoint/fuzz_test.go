package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// Fuzz targets for the decoders of each checkpoint file body: the log
// framing (FuzzDecodeEntry) checks a checksum first, so random input
// rarely reaches these; they take the body directly. Seed corpora are in
// testdata/fuzz/<target>, taken from real checkpoints.

// FuzzDecodeOffsetSeq: an offset-log entry body decodes or fails with
// ErrCorrupt, never panics; what decodes re-encodes to the same entry.
func FuzzDecodeOffsetSeq(f *testing.F) {
	f.Add([]byte(`{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{"spark.sql.shuffle.partitions":"2"}}` + "\n" + `{"n":10}`))
	f.Add([]byte("{}\n-\n{\"offset\":3,\"timestamp\":0}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		seq, err := decodeOffsetSeq(body)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		again, err := encodeOffsetSeq(seq)
		if err != nil {
			return // e.g. an offset JSON with a raw newline cannot be written back
		}
		seq2, err := decodeOffsetSeq(again)
		if err != nil {
			t.Fatalf("re-encoded entry %q does not decode: %v", again, err)
		}
		a, _ := json.Marshal(seq)
		b, _ := json.Marshal(seq2)
		if !bytes.Equal(a, b) || len(seq.Offsets) != len(seq2.Offsets) {
			t.Fatalf("round trip changed the entry: %s vs %s", a, b)
		}
	})
}

// FuzzDecodeCommit: a commit-log entry body decodes or fails with
// ErrCorrupt.
func FuzzDecodeCommit(f *testing.F) {
	f.Add([]byte(`{"nextBatchWatermarkMs":0}`))
	f.Add([]byte(`{"nextBatchWatermarkMs":12000}`))
	f.Add([]byte(" "))
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeCommit(body); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
	})
}

// FuzzParseMetadata: a metadata file parses to a UUID id or fails with
// ErrCorrupt naming the file.
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e91"}`))
	f.Add([]byte(`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e91","version":2}`))
	f.Add([]byte(`{"id":""}`))
	f.Add([]byte(`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e91","stateSchemas":{"0":"aggregate key<k:int> value<n:bigint>"}}`))
	f.Add([]byte(`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e91","stateSchemas":{"0":5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMetadata("fuzz/metadata", data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("fuzz/metadata")) {
				t.Fatalf("bad error: %v", err)
			}
			return
		}
		if !isUUID(m.ID) {
			t.Fatalf("accepted id %q", m.ID)
		}
	})
}

// FuzzDecodeStatePatched damages the record-batch messages of a valid
// state file of format v1 (an Arrow IPC stream) and fixes the checksum, so that the Arrow IPC decoding behind
// the checksum is exercised (FuzzDecodeState's inputs stop at the
// checksum). patch: one byte picking the base file, four bytes of offset
// into the region after the schema message, then bytes XORed in there.
// Decoding must fail with ErrCorrupt or succeed; never panic or exhaust
// memory.
func FuzzDecodeStatePatched(f *testing.F) {
	mem := memory.NewGoAllocator()
	var bases [][]byte
	for _, n := range []int{3, 200} {
		keys := make([]string, n)
		vals := map[string][]byte{}
		del := map[string]bool{}
		for i := range keys {
			keys[i] = fmt.Sprintf("key%04d", i)
			if i%5 == 4 {
				del[keys[i]] = true
			} else {
				vals[keys[i]] = bytes.Repeat([]byte{byte(i)}, i%17)
			}
		}
		raw, err := stateIPC(mem, keys, vals, del)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, raw)
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0xff})
	f.Add([]byte{1, 16, 0, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f})
	f.Add([]byte{0, 100, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, patch []byte) {
		if len(patch) < 6 {
			return
		}
		base := bases[int(patch[0])%len(bases)]
		// The schema message: continuation marker, length, flatbuffer.
		start := 8 + int(binary.LittleEndian.Uint32(base[4:8]))
		region := len(base) - start
		if region <= 0 {
			return
		}
		body := bytes.Clone(base)
		off := start + int(binary.LittleEndian.Uint32(patch[1:5]))%region
		for i, b := range patch[5:] {
			if off+i < len(body) {
				body[off+i] ^= b
			}
		}
		var tr [8]byte
		binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(body, castagnoli))
		copy(tr[4:], stateMagic[:])
		err := decodeStateBounded(mem, append(body, tr[:]...), map[string][]byte{}, 16<<20)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
	})
}

// TestDecodeStateHugeMessageLength is the regression test of a
// FuzzDecodeStatePatched finding: a checksummed state file whose second
// message claims 2 GiB of metadata made the IPC reader allocate it (the
// fuzzer's process ran out of memory). The framing check refuses it.
func TestDecodeStateHugeMessageLength(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	body, err := stateIPC(mem, []string{"a"}, map[string][]byte{"a": []byte("1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := 8 + int(binary.LittleEndian.Uint32(body[4:8])) // after the schema message
	body = append(bytes.Clone(body[:next]), 0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f)
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(body, castagnoli))
	copy(tr[4:], stateMagic[:])
	err = decodeState(mem, append(body, tr[:]...), map[string][]byte{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bytes left") {
		t.Fatalf("want a framing error, got %v", err)
	}
}

// FuzzDecodeStateColumns damages the body of a valid state file of format
// v2 (stored or S2-compressed) and fixes the checksum, so that the chunk
// decoding behind it is exercised. patch: one byte picking the base file,
// two bytes of offset into the body, then bytes XORed in there. Decoding
// must fail with ErrCorrupt or succeed; what succeeds re-encodes to a
// file that decodes to the same state.
func FuzzDecodeStateColumns(f *testing.F) {
	mem := memory.NewGoAllocator()
	var bases [][]byte
	for _, n := range []int{3, 40, 2000} {
		keys, vals, del := testState(n)
		raw, err := encodeState(mem, keys, vals, del)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, raw[:len(raw)-8])
	}
	f.Add([]byte{0, 5, 0, 0xff})
	f.Add([]byte{1, 17, 0, 0x7f, 0x7f})
	f.Add([]byte{2, 9, 0, 1})
	f.Add([]byte{0, 4, 0, 1})
	f.Fuzz(func(t *testing.T, patch []byte) {
		if len(patch) < 4 {
			return
		}
		base := bases[int(patch[0])%len(bases)]
		body := bytes.Clone(base)
		off := int(binary.LittleEndian.Uint16(patch[1:3])) % len(body)
		for i, b := range patch[3:] {
			if off+i < len(body) {
				body[off+i] ^= b
			}
		}
		got := map[string][]byte{}
		err := decodeStateBounded(mem, stateTrailer(body), got, 16<<20)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		again, err := encodeState(mem, keys, got, nil)
		if err != nil {
			t.Fatal(err)
		}
		back := map[string][]byte{}
		if err := decodeState(mem, again, back); err != nil || len(back) != len(got) {
			t.Fatalf("re-encoded state: %d entries of %d, %v", len(back), len(got), err)
		}
	})
}

// FuzzDecodeSegment: an epoch log segment decodes, is reported torn, or
// fails with ErrCorrupt; never panics. What decodes re-encodes to the
// valid prefix, byte for byte (the framing has one spelling).
func FuzzDecodeSegment(f *testing.F) {
	seg := appendSegmentHeader(nil)
	seg = appendRecord(seg, record{kind: kindOffsets, epoch: 0, body: []byte(`{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}` + "\n1")})
	seg = appendRecord(seg, record{kind: kindCommit, epoch: 0, body: []byte(`{"nextBatchWatermarkMs":0}`)})
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add(appendSegmentHeader(nil))
	f.Add([]byte("ASEG"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := decodeSegment("seg", data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		if dec.valid > int64(len(data)) || dec.torn == "" && dec.valid != int64(len(data)) {
			t.Fatalf("valid %d of %d bytes, torn %q", dec.valid, len(data), dec.torn)
		}
		if dec.valid == 0 {
			return
		}
		again := appendSegmentHeader(nil)
		for _, r := range dec.records {
			again = appendRecord(again, r)
		}
		if !bytes.Equal(again, data[:dec.valid]) {
			t.Fatalf("re-encoding differs:\n%x\n%x", again, data[:dec.valid])
		}
	})
}
