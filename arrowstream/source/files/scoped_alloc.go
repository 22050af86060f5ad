package files

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// scopedAlloc tracks the buffers one arrow reader allocates. When the
// reader fails (or panics) half-way through a batch, its builders still
// hold buffers that arrow's readers never free (their Release leaves a
// half-built batch behind); abandon frees them, so a malformed file costs
// no leaked memory. Buffers that escaped in records are freed through the
// scope as usual and stop being tracked. Safe for concurrent use, since
// records may be released on another goroutine.
type scopedAlloc struct {
	mem  memory.Allocator
	mu   sync.Mutex
	live map[*byte][]byte
}

func newScopedAlloc(mem memory.Allocator) *scopedAlloc {
	return &scopedAlloc{mem: mem, live: map[*byte][]byte{}}
}

func (s *scopedAlloc) track(b []byte) {
	if cap(b) > 0 {
		s.mu.Lock()
		s.live[unsafe.SliceData(b)] = b
		s.mu.Unlock()
	}
}

func (s *scopedAlloc) untrack(b []byte) {
	if cap(b) > 0 {
		s.mu.Lock()
		delete(s.live, unsafe.SliceData(b))
		s.mu.Unlock()
	}
}

// Allocate implements memory.Allocator.
func (s *scopedAlloc) Allocate(size int) []byte {
	b := s.mem.Allocate(size)
	s.track(b)
	return b
}

// Reallocate implements memory.Allocator.
func (s *scopedAlloc) Reallocate(size int, b []byte) []byte {
	s.untrack(b)
	nb := s.mem.Reallocate(size, b)
	s.track(nb)
	return nb
}

// Free implements memory.Allocator.
func (s *scopedAlloc) Free(b []byte) {
	s.untrack(b)
	s.mem.Free(b)
}

// abandon frees every buffer still allocated: call it only once nothing
// that the scope's reader produced is referenced any more.
func (s *scopedAlloc) abandon() {
	s.mu.Lock()
	live := s.live
	s.live = map[*byte][]byte{}
	s.mu.Unlock()
	for _, b := range live {
		s.mem.Free(b)
	}
}
