package memsink

import "testing"

// TestLogKeptBufferBounded: the encode buffer is kept between appends up
// to maxKeptBuf, never past it, and is given back once a whole window of
// appends needed less than half of it.
func TestLogKeptBufferBounded(t *testing.T) {
	l := newSinkLog(t.TempDir(), nil)
	l.keep(make([]byte, 100, maxKeptBuf+1))
	if l.buf != nil {
		t.Fatalf("kept a buffer of %d bytes, bound %d", maxKeptBuf+1, maxKeptBuf)
	}
	// A record of 5 MiB: kept (the bound before session 29, 4 MiB, made
	// every such epoch grow a buffer afresh).
	l.keep(make([]byte, 5<<20, 6<<20))
	if cap(l.buf) != 6<<20 || len(l.buf) != 0 {
		t.Fatalf("kept buffer: len %d cap %d, want 0 and %d", len(l.buf), cap(l.buf), 6<<20)
	}
	// Small records follow: the buffer stays for the rest of the window
	// that saw the large one, and goes at the end of the next.
	n := 0
	for l.buf != nil {
		l.keep(l.frameStart())
		n++
		if n > 2*keptBufWindow {
			t.Fatalf("still kept %d bytes after %d small records", cap(l.buf), n)
		}
	}
	if done := 2 + n; done != 2*keptBufWindow {
		t.Fatalf("given back after %d appends, want %d (the end of the first window without a large record)", done, 2*keptBufWindow)
	}
	// A buffer sized to its records stays.
	for range 3 * keptBufWindow {
		b := append(l.frameStart(), make([]byte, 1000)...)
		l.keep(b)
		if l.buf == nil {
			t.Fatal("gave back a buffer its records use")
		}
	}
}
