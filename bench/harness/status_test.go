package harness

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// fakeStatus is a status file in memory that counts its opens, reads
// and closes, and can fail its next read.
type fakeStatus struct {
	text                 string
	opens, reads, closes int
	failNext             bool
}

func (f *fakeStatus) open() (io.ReaderAt, io.Closer, error) {
	f.opens++
	return f, f, nil
}

func (f *fakeStatus) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	if f.failNext {
		f.failNext = false
		return 0, errors.New("read failed")
	}
	return strings.NewReader(f.text).ReadAt(p, off)
}

func (f *fakeStatus) Close() error { f.closes++; return nil }

func statusText(pad int, anonKB, fileKB int64) string {
	return fmt.Sprintf("Name:\tarrowstream\nVmRSS:\t  999 kB\n%sRssAnon:\t  %d kB\nRssFile:\t  %d kB\nRssShmem:\t  0 kB\n",
		strings.Repeat("Pad:\tx\n", pad), anonKB, fileKB)
}

// TestStatusReaderOneReadPerSample: the meter's sample of the resident
// set's parts reads the status file once, through a descriptor opened
// once, and parses both fields from that read (the samples' CPU is
// billed to the engine's run).
func TestStatusReaderOneReadPerSample(t *testing.T) {
	f := &fakeStatus{text: statusText(3, 1234, 56)}
	s := statusReader{open: f.open}
	for i := range 3 {
		anon, file := s.rssParts()
		if anon != 1234<<10 || file != 56<<10 {
			t.Fatalf("sample %d: rssParts = %d, %d, want %d, %d", i, anon, file, 1234<<10, 56<<10)
		}
	}
	if f.opens != 1 || f.reads != 3 {
		t.Errorf("3 samples opened the file %d times and read it %d times, want 1 and 3", f.opens, f.reads)
	}
	// Closed (the meter stopped), a later sample opens it again.
	s.close()
	if f.closes != 1 {
		t.Errorf("close closed %d times, want 1", f.closes)
	}
	if anon, _ := s.rssParts(); anon != 1234<<10 || f.opens != 2 {
		t.Errorf("after close: anon %d, opens %d; want %d, 2", anon, f.opens, 1234<<10)
	}
	// A failed read gives zeros and closes; the next sample reopens.
	f.failNext = true
	if anon, file := s.rssParts(); anon != 0 || file != 0 {
		t.Errorf("failed read: rssParts = %d, %d, want 0, 0", anon, file)
	}
	if anon, _ := s.rssParts(); anon != 1234<<10 || f.opens != 3 || f.closes != 2 {
		t.Errorf("after a failed read: anon %d, opens %d, closes %d; want %d, 3, 2", anon, f.opens, f.closes, 1234<<10)
	}
}

// TestStatusReaderLongFile: a status file longer than the buffer is read
// whole (the fields at its end found), and the grown buffer is kept, so
// the next sample reads once.
func TestStatusReaderLongFile(t *testing.T) {
	f := &fakeStatus{text: statusText(2000, 7, 8)} // ~16 KB
	s := statusReader{open: f.open}
	if anon, file := s.rssParts(); anon != 7<<10 || file != 8<<10 {
		t.Fatalf("rssParts = %d, %d, want %d, %d", anon, file, 7<<10, 8<<10)
	}
	first := f.reads
	if first < 2 {
		t.Fatalf("a %d-byte file read in %d reads of a 4096-byte buffer", len(f.text), first)
	}
	s.rssParts()
	if f.reads-first != 1 {
		t.Errorf("second sample read %d times, want 1 (the grown buffer kept)", f.reads-first)
	}
}

// TestStatusFieldMatchesProc: the parse agrees with the running
// process's status file, and a missing field is reported missing.
func TestStatusFieldMatchesProc(t *testing.T) {
	s := statusReader{open: openStatus}
	defer s.close()
	anon, file := s.rssParts()
	want, _ := rssParts()
	if want == 0 {
		t.Skip("no /proc/self/status on this platform")
	}
	if anon <= 0 || file <= 0 {
		t.Errorf("rssParts from the kept descriptor = %d, %d, want both positive", anon, file)
	}
	// The kept descriptor reads the file afresh: 64 MiB touched after
	// the first sample show in the second.
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	anon2, _ := s.rssParts()
	if anon2 < anon+32<<20 {
		t.Errorf("after touching 64 MiB the kept descriptor read RssAnon %d, first %d", anon2, anon)
	}
	buf[len(buf)-1] = 1 // buf live until here
	if _, ok := statusField([]byte(statusText(1, 1, 1)), "VmHWM:"); ok {
		t.Error("statusField found a field the text does not have")
	}
	if n, ok := statusField([]byte("RssAnon:\t 12 kB"), "RssAnon:"); !ok || n != 12<<10 {
		t.Errorf("last line without newline: %d, %v", n, ok)
	}
}
