package harness

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// statusReader reads the anonymous and file parts of the resident set
// from /proc/self/status for the memory meter's samples after epochs.
// The meter's CPU is billed to the engine's run (the Go peers are not
// metered), so a sample is one read through a descriptor kept open,
// into a buffer kept, parsed in place: os.ReadFile opens, stats and
// closes the file each time, and reading it once per field doubled the
// kernel's generation of the whole file, together about 3 % of the
// windowed workload's CPU (session 38).
type statusReader struct {
	open func() (io.ReaderAt, io.Closer, error) // opens the status file

	mu  sync.Mutex
	r   io.ReaderAt // nil: not open (or closed)
	c   io.Closer
	buf []byte
}

// rssParts returns RssAnon and RssFile in bytes, 0 for a field the file
// does not have or a read that fails.
func (s *statusReader) rssParts() (anon, file int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.readLocked()
	if !ok {
		return 0, 0
	}
	anon, _ = statusField(raw, "RssAnon:")
	file, _ = statusField(raw, "RssFile:")
	return anon, file
}

// readLocked reads the whole file from its start, growing the buffer
// until one read leaves room to spare (so the read was not cut short).
func (s *statusReader) readLocked() ([]byte, bool) {
	if s.r == nil {
		if s.open == nil {
			return nil, false
		}
		r, c, err := s.open()
		if err != nil {
			return nil, false
		}
		s.r, s.c = r, c
	}
	if len(s.buf) == 0 {
		s.buf = make([]byte, 4096)
	}
	for {
		n, err := s.r.ReadAt(s.buf, 0)
		if err != nil && err != io.EOF {
			s.closeLocked() // opened again at the next sample
			return nil, false
		}
		if n < len(s.buf) {
			return s.buf[:n], true
		}
		s.buf = make([]byte, 2*len(s.buf))
	}
}

// close releases the descriptor; a later sample opens it again.
func (s *statusReader) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
}

func (s *statusReader) closeLocked() {
	if s.c != nil {
		s.c.Close()
	}
	s.r, s.c = nil, nil
}

// statusField finds the line "<key> <n> kB" in raw (the text of
// /proc/self/status) and returns n in bytes.
func statusField(raw []byte, key string) (int64, bool) {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if len(line) < len(key) || string(line[:len(key)]) != key {
			continue // not the field: no split
		}
		f := bytes.Fields(line)
		if len(f) == 3 && string(f[0]) == key && string(f[2]) == "kB" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			return n << 10, err == nil
		}
	}
	return 0, false
}
