package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestCRC32CCombineMatchesConcatenation: the combined checksum of two parts
// is the checksum of the parts end to end, for empty parts, short ones and
// lengths across many powers of two.
func TestCRC32CCombineMatchesConcatenation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lens := []int{0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 255, 256, 4095, 4096, 65537, 1 << 20}
	for i := 0; i < 30; i++ {
		lens = append(lens, r.IntN(1<<18))
	}
	for _, la := range lens[:8] {
		for _, lb := range lens {
			buf := make([]byte, la+lb)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			a, b := crc32c(buf[:la]), crc32c(buf[la:])
			if got, want := crc32cCombine(a, b, int64(lb)), crc32c(buf); got != want {
				t.Fatalf("combine of %d and %d bytes: %08x, the whole gives %08x", la, lb, got, want)
			}
		}
	}
}

// TestCRC32CWithSpansMatchesWhole: a buffer's checksum from its spans'
// checksums and the bytes between them is the checksum of all its bytes,
// for spans at the start, at the end, adjacent and apart.
func TestCRC32CWithSpansMatchesWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		buf := make([]byte, r.IntN(5000))
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		from := 0
		if len(buf) > 0 {
			from = r.IntN(len(buf) + 1)
		}
		var sums crcSpans
		for pos := from; pos < len(buf); {
			off := pos + r.IntN(3)*r.IntN(40) // 0 often: adjacent spans
			if off >= len(buf) {
				break
			}
			n := r.IntN(len(buf) - off + 1)
			sums.add(off, n, crc32.Checksum(buf[off:off+n], castagnoli))
			pos = off + n
		}
		if got, want := crc32cWith(buf, from, &sums), crc32c(buf[from:]); got != want {
			t.Fatalf("trial %d: %d bytes from %d, spans %v: %08x, want %08x", trial, len(buf), from, sums.spans, got, want)
		}
	}
}

// TestAppendRecordCombinesCarriedSums: a built record's checksum takes the
// spans' checksums as given — the bytes inside a span are not hashed again.
// A span whose checksum is that of other bytes shows it: the record's
// checksum is the one those bytes would give, not the one of its own.
func TestAppendRecordCombinesCarriedSums(t *testing.T) {
	inner := []byte("the delta's bytes, checksummed where they were written")
	other := []byte("other bytes of the same length as the delta's bytes!!!")
	if len(other) != len(inner) {
		t.Fatalf("test setup: %d and %d bytes", len(other), len(inner))
	}
	var sums crcSpans
	build := func(dst []byte) []byte {
		dst = append(dst, "head"...)
		sums.add(len(dst), len(inner), crc32c(other))
		dst = append(dst, inner...)
		return append(dst, "tail"...)
	}
	prefix := []byte("segment header and staged records")
	rec := appendRecord(bytes.Clone(prefix), record{kind: kindState, epoch: 9, build: build, sums: &sums})
	body := rec[len(prefix)+recordHeaderLen:]
	as := bytes.Replace(bytes.Clone(body), inner, other, 1)
	got := binary.LittleEndian.Uint32(rec[len(prefix)+4:])
	if want := crc32c(as); got != want {
		t.Fatalf("record checksum %08x: the carried span's checksum was not used (with it: %08x, hashing the bytes: %08x)", got, want, crc32c(body))
	}
	// Built again (a record appended once more), the spans are this
	// build's only.
	rec2 := appendRecord(nil, record{kind: kindState, epoch: 9, build: build, sums: &sums})
	if len(sums.spans) != 1 || binary.LittleEndian.Uint32(rec2[4:]) != got {
		t.Fatalf("built twice: %d spans, checksum %08x, want 1 and %08x", len(sums.spans), binary.LittleEndian.Uint32(rec2[4:]), got)
	}
}

// TestEpochStateRecordCarriesDeltaChecksums appends changelog epochs of a
// few partitions to a state log in the epoch log (the deltas encoded in
// place, as the group commit does): every delta's bytes but its trailer
// are covered by a carried checksum, so the record's checksum hashes only
// the framing; and the segments decode with every checksum right.
func TestEpochStateRecordCarriesDeltaChecksums(t *testing.T) {
	dir := t.TempDir()
	w := &Writer{NoSync: true}
	ep, err := OpenSegmentLog(filepath.Join(dir, EpochLogDir), w, true)
	if err != nil {
		t.Fatal(err)
	}
	l, err := OpenQueryStateLog(filepath.Join(dir, "state"), ep, w)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for v := int64(1); v <= 12; v++ {
		var deltas []StateDelta
		deltaBytes, framing := 0, 8+12 // cover, version and count
		for p := range 1 + rng.IntN(4) {
			a, _, _ := randomArena(rng)
			path := fmt.Sprintf("0/%d", p)
			deltas = append(deltas, StateDelta{Path: path, enc: a})
			deltaBytes += a.deltaLen() - 8
			framing += 8 + len(path) + 8
		}
		if err := l.Append(v, deltas); err != nil {
			t.Fatal(err)
		}
		covered := 0
		for _, sp := range l.crcSums.spans {
			covered += sp.n
		}
		if covered != deltaBytes {
			t.Fatalf("version %d: carried checksums cover %d bytes of the deltas' %d (%d bytes of framing): the record hashes them again", v, covered, deltaBytes, framing)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, EpochLogDir, "*"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments (%v)", err)
	}
	states := 0
	for _, s := range segs {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := decodeSegment(s, data)
		if err != nil || dec.torn != "" {
			t.Fatalf("%s: %v %s", s, err, dec.torn)
		}
		for _, r := range dec.records {
			if r.kind == kindState {
				states++
			}
		}
	}
	if states != 12 {
		t.Fatalf("%d state records decoded, want 12", states)
	}
}
