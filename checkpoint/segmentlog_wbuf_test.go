package checkpoint

import (
	"bytes"
	"fmt"
	"testing"
)

// TestSegmentLogReusedWriteBufferKeepsEpochsApart appends a large state
// record, then smaller ones, each with an offsets record staged beside
// it, so that the kept write buffer serves epochs smaller than the one
// that sized it; the log read back (by the open log and after reopening)
// must hold exactly each epoch's bytes, none of an earlier epoch's
// left in the buffer.
func TestSegmentLogReusedWriteBufferKeepsEpochsApart(t *testing.T) {
	dir := t.TempDir()
	w := &Writer{NoSync: true, DirectAppendMin: directBlock}
	l, err := OpenSegmentLog(dir, w, true)
	if err != nil {
		t.Fatal(err)
	}
	// Each body a run of its own byte, so a leftover byte of another
	// epoch's record reads as a mismatch.
	sizes := []int{600 << 10, 3 << 10, 1, 200 << 10, 17}
	bodies := make([][]byte, len(sizes))
	var kept uintptr
	for i, n := range sizes {
		body := bytes.Repeat([]byte{byte(0xA0 + i)}, n)
		bodies[i] = body
		if _, err := l.stage(kindOffsets, int64(i), []byte(fmt.Sprintf(`{"epoch":%d}`, i))); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := l.appendState(int64(i+1), n, func(dst []byte) []byte { return append(dst, body...) }, nil); err != nil {
			t.Fatalf("epoch %d: %v", i, err)
		}
		l.mu.Lock()
		end := arrayEnd(l.wbuf)
		l.mu.Unlock()
		switch {
		case i == 0:
			kept = end
		case i < 3 && end != kept:
			t.Fatalf("epoch %d: the write buffer was replaced, not reused", i)
		}
	}
	check := func(what string, l *SegmentLog) {
		t.Helper()
		recs, err := l.stateRecords()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(bodies) {
			t.Fatalf("%s: %d state records, want %d", what, len(recs), len(bodies))
		}
		for i, r := range recs {
			if r.epoch != int64(i) || !bytes.Equal(r.body, bodies[i]) {
				t.Fatalf("%s: record %d (epoch %d): %d bytes, want %d bytes of %#x", what, i, r.epoch, len(r.body), len(bodies[i]), 0xA0+i)
			}
		}
		for i := range sizes {
			got, ok := l.entries[kindIndex(kindOffsets)][int64(i)]
			if want := fmt.Sprintf(`{"epoch":%d}`, i); !ok || string(got) != want {
				t.Fatalf("%s: offsets of epoch %d: %q, want %q", what, i, got, want)
			}
		}
	}
	// The open log reads the segments again (its first read is the
	// records loaded at open, none here).
	l.stateRecords()
	check("open log", l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := OpenSegmentLog(dir, w, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	check("reopened log", l2)
}

// TestSegmentLogPrefaultsNewWriteBuffer checks that a write buffer the
// log makes for an append is handed to Writer.Prefault, whole, before the
// records are built in it (the pages of a fresh query's first appends
// are mapped in by system calls, not a trap each), and that a buffer
// kept and reused is not handed again (its pages are mapped; a residency
// check each epoch would be a cost for nothing). The records read back.
func TestSegmentLogPrefaultsNewWriteBuffer(t *testing.T) {
	dir := t.TempDir()
	type call struct {
		end  uintptr
		n    int
		zero bool
	}
	var calls []call
	w := &Writer{NoSync: true, DirectAppendMin: directBlock, Prefault: func(b []byte) {
		calls = append(calls, call{end: arrayEnd(b), n: len(b), zero: !bytes.ContainsFunc(b, func(r rune) bool { return r != 0 })})
	}}
	l, err := OpenSegmentLog(dir, w, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sizes := []int{300 << 10, 200 << 10, 290 << 10, 900 << 10}
	for i, n := range sizes {
		before := len(calls)
		body := bytes.Repeat([]byte{byte(0xB0 + i)}, n)
		if _, _, _, err := l.appendState(int64(i+1), n, func(dst []byte) []byte {
			if len(calls) == before && (i == 0 || i == 3) {
				t.Errorf("append %d (%d bytes): the records were built before the new buffer was prefaulted", i, n)
			}
			return append(dst, body...)
		}, nil); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		l.mu.Lock()
		end, c := arrayEnd(l.wbuf), cap(l.wbuf)
		l.mu.Unlock()
		switch i {
		case 0, 3: // a new buffer: the first append, one larger than the kept one
			if len(calls) != before+1 {
				t.Fatalf("append %d (%d bytes): %d prefault calls, want 1", i, n, len(calls)-before)
			}
			if got := calls[before]; got.end != end || got.n != c || got.n < n || !got.zero {
				t.Fatalf("append %d: prefaulted %d bytes ending at %#x (zero %v), the buffer holds %d ending at %#x", i, got.n, got.end, got.zero, c, end)
			}
		default: // the kept buffer
			if len(calls) != before {
				t.Fatalf("append %d (%d bytes) into the kept buffer: prefaulted again", i, n)
			}
		}
	}
	l.stateRecords() // its first read is the records loaded at open: none
	recs, err := l.stateRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(sizes) {
		t.Fatalf("%d state records, want %d", len(recs), len(sizes))
	}
	for i, r := range recs {
		if !bytes.Equal(r.body, bytes.Repeat([]byte{byte(0xB0 + i)}, sizes[i])) {
			t.Fatalf("record %d: %d bytes, not the %d appended", i, len(r.body), sizes[i])
		}
	}
}
