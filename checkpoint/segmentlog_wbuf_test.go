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
		if _, _, _, err := l.appendState(int64(i+1), n, func(dst []byte) []byte { return append(dst, body...) }); err != nil {
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
