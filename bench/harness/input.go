package harness

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// InputAllocator returns an allocator for a workload's generated input:
// buffers of 64 KiB and more are anonymous memory mappings outside the Go
// heap (on Unix), returned to the OS when freed. Input held through a run
// then neither raises the garbage collector's heap goal nor hides inside
// the Go heap's figures; it is resident from generation on, so it is part
// of MemoryMeter's baseline. Smaller buffers, and every buffer where
// mapping fails or is not available, come from Go's allocator.
//
// As with any allocator outside the Go heap, a value taken from a buffer
// without copying it (a Go string over its bytes) must not outlive the
// record: it would fault instead of keeping the buffer alive.
func InputAllocator() memory.Allocator {
	return &inputAllocator{fallback: memory.NewGoAllocator(), mapped: map[*byte]int{}}
}

type inputAllocator struct {
	fallback memory.Allocator
	mu       sync.Mutex
	mapped   map[*byte]int // mapping start → length
}

// minInputMapped is the smallest buffer worth a mapping (16 pages).
const minInputMapped = 64 << 10

func (a *inputAllocator) Allocate(size int) []byte {
	if size < minInputMapped {
		return a.fallback.Allocate(size)
	}
	n := (size + pageSize - 1) &^ (pageSize - 1)
	m, err := mapAnon(n)
	if err != nil {
		return a.fallback.Allocate(size)
	}
	a.mu.Lock()
	a.mapped[unsafe.SliceData(m)] = len(m)
	a.mu.Unlock()
	return m[:size]
}

func (a *inputAllocator) Reallocate(size int, b []byte) []byte {
	if n, ok := a.mappedLen(b); ok && size <= n {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	if _, ok := a.mappedLen(b); !ok && size < minInputMapped {
		return a.fallback.Reallocate(size, b)
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *inputAllocator) Free(b []byte) {
	p := unsafe.SliceData(b)
	a.mu.Lock()
	n, ok := a.mapped[p]
	delete(a.mapped, p)
	a.mu.Unlock()
	if !ok {
		a.fallback.Free(b)
		return
	}
	unmap(unsafe.Slice(p, n))
}

func (a *inputAllocator) mappedLen(b []byte) (int, bool) {
	if cap(b) == 0 {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.mapped[unsafe.SliceData(b)]
	return n, ok
}
