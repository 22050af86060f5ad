package memsink

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// offHeap allocates large buffers as anonymous memory mappings outside the
// Go heap, for the records compaction builds: they live long, so in the
// Go heap they would raise the garbage collector's heap goal (the process
// holds up to twice its live heap between collections) and, once
// released, stay resident until the runtime scavenges them. A mapping is
// returned to the OS when its buffer is freed. Buffers under minMapped
// bytes, and every allocation when mapping fails, come from the fallback
// allocator (Go's).
type offHeap struct {
	fallback memory.Allocator
	mu       sync.Mutex
	mapped   map[*byte]int // mapping start → length
	bytes    atomic.Int64  // bytes mapped now
}

// minMapped is the smallest buffer worth a mapping (16 pages).
const minMapped = 64 << 10

func newOffHeap(fallback memory.Allocator) *offHeap {
	return &offHeap{fallback: fallback, mapped: map[*byte]int{}}
}

// Allocate implements memory.Allocator; the memory is zeroed.
func (a *offHeap) Allocate(size int) []byte {
	if size < minMapped {
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
	a.bytes.Add(int64(len(m)))
	return m[:size]
}

// Reallocate implements memory.Allocator.
func (a *offHeap) Reallocate(size int, b []byte) []byte {
	if n, ok := a.mappedLen(b); ok && size <= n {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	if _, ok := a.mappedLen(b); !ok && size < minMapped {
		return a.fallback.Reallocate(size, b)
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (a *offHeap) Free(b []byte) {
	p := unsafe.SliceData(b)
	a.mu.Lock()
	n, ok := a.mapped[p]
	delete(a.mapped, p)
	a.mu.Unlock()
	if !ok {
		a.fallback.Free(b)
		return
	}
	a.bytes.Add(-int64(n))
	unmap(unsafe.Slice(p, n))
}

func (a *offHeap) mappedLen(b []byte) (int, bool) {
	if cap(b) == 0 {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.mapped[unsafe.SliceData(b)]
	return n, ok
}

// Mapped is the number of bytes mapped now.
func (a *offHeap) Mapped() int64 { return a.bytes.Load() }
