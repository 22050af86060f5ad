package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/arrowstream/arrowstream/vector"
)

// Reading a CSV or JSON file as a stream.
//
// A file is read through a window of about two chunks (ChunkBytes, 1 MiB
// by default), refilled from the file as chunks are decoded, never whole:
// a 1 GB file costs the window and the decoded batches in flight, not a
// gigabyte of Go heap. The window grows only to hold one line longer than
// it (a JSON document on one line); its bytes are reserved through the
// allocator when it enforces a memory limit (vector.MemoryReserver, the
// server's per-query allocator), so a line that does not fit the query's
// limit fails the query with the limit's error (RESOURCE_EXHAUSTED) naming
// the file, instead of being read into memory no limit counts.

// lineStream is the file side of a lineFile read as a stream.
type lineStream struct {
	r        io.ReadCloser
	buf      []byte // the window: f.data is buf[:n]
	eof      bool
	started  bool // the byte-order mark and header have been skipped
	header   bool // skip the first line (CSV with a header)
	res      vector.MemoryReserver
	reserved int64
	// peakHeld is the most window bytes held at once (old and new
	// window during a growth's copy), for tests to compare with the
	// reservation.
	peakHeld int64
}

// streamLines returns the operator over the CSV or JSON file r of name,
// reading it a window at a time. It closes r.
func (s *Source) streamLines(name string, r io.ReadCloser) *lineFile {
	f := s.lineOperator(name, nil)
	res, _ := s.mem.(vector.MemoryReserver)
	f.stream = &lineStream{r: r, header: s.opts.Format == CSV && s.opts.Header, res: res}
	f.line = 1
	return f
}

// fill makes f.data[f.pos:] hold at least one chunk ending at a line end,
// or the rest of the file, moving what is left to the front of the
// window and reading more; first it skips the preamble. Without a stream
// (the data given whole) it does nothing.
func (f *lineFile) fill() error {
	st := f.stream
	if st == nil {
		return nil
	}
	for {
		if !st.started && (st.eof || f.haveLine()) {
			st.started = true
			f.skipPreamble()
		}
		if st.eof || st.started && f.haveChunk() {
			return nil
		}
		rest := len(f.data) - f.pos
		if f.pos > 0 {
			copy(st.buf, f.data[f.pos:])
			f.data, f.pos = st.buf[:rest], 0
		}
		if rest == len(st.buf) {
			if err := f.growWindow(max(2*len(st.buf), 2*f.chunk, 64<<10)); err != nil {
				return err
			}
			f.data = st.buf[:rest]
		}
		n, err := st.r.Read(st.buf[rest:])
		f.data = st.buf[:rest+n]
		if errors.Is(err, io.EOF) {
			st.eof = true
		} else if err != nil {
			return fmt.Errorf("files: read %s: %w", f.name, err)
		}
	}
}

// haveChunk reports whether the window holds a chunk's bytes and a line
// end at or after the chunk's end (so readChunk's chunk is whole lines).
func (f *lineFile) haveChunk() bool {
	rest := f.data[f.pos:]
	return len(rest) >= f.chunk && bytes.IndexByte(rest[f.chunk-1:], '\n') >= 0
}

// haveLine reports whether the window holds a whole line.
func (f *lineFile) haveLine() bool { return bytes.IndexByte(f.data[f.pos:], '\n') >= 0 }

// skipPreamble skips a UTF-8 byte-order mark and, for a CSV file with a
// header, the header line, as lineOperator does for data given whole.
func (f *lineFile) skipPreamble() {
	rest := f.data[f.pos:]
	if bytes.HasPrefix(rest, []byte("\xef\xbb\xbf")) {
		f.pos += 3
		rest = rest[3:]
	}
	if f.stream.header {
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			f.pos += i + 1
		} else {
			f.pos = len(f.data)
		}
		f.line = 2
	}
}

// growWindow grows the window to size bytes, or by less when the limit
// refuses that much, reserving the growth before it is made.
//
// While the window is copied the old and the new one are both held, so
// the new one is reserved whole before it is allocated and the old one's
// reservation is returned only after the copy: the bytes reserved are
// never fewer than the windows held, and a line the limit cannot hold is
// refused before the process holds more than the limit (reserving only
// the growth let the copy briefly take about twice the limit). When
// doubling is refused, the window grows by one step (a chunk) if that
// fits, so that a line of up to about half the limit is still read.
func (f *lineFile) growWindow(size int) error {
	st := f.stream
	old := len(st.buf)
	if st.res != nil {
		err := st.res.Reserve(int64(size))
		if step := old + max(f.chunk, 64<<10); err != nil && step < size && st.res.Reserve(int64(step)) == nil {
			size, err = step, nil
		}
		if err != nil {
			return fmt.Errorf("files: %s: reading it needs a window of %d bytes (a line that long, or chunks of ChunkBytes) while the %d-byte one is copied into it: %w", f.name, size, old, err)
		}
	}
	st.reserved += int64(size)
	nb := make([]byte, size)
	st.peakHeld = max(st.peakHeld, int64(old+size))
	copy(nb, st.buf)
	st.buf = nb
	if st.res != nil {
		_ = st.res.Reserve(-int64(old))
	}
	st.reserved -= int64(old)
	return nil
}

// closeStream closes the file and returns the window's reservation.
func (f *lineFile) closeStream() {
	st := f.stream
	if st == nil {
		return
	}
	f.stream = nil
	f.data, st.buf = nil, nil
	_ = st.r.Close()
	if st.res != nil && st.reserved != 0 {
		_ = st.res.Reserve(-st.reserved)
	}
	st.reserved = 0
}
