package vector

import (
	"context"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// MappedAllocator is a memory.Allocator that maps buffers of a megabyte and
// more from the OS (zero pages, faulted in as they are written) and makes
// smaller ones on the Go heap. Under a PoolAllocator it is what lets a
// query's large buffers be made interruptibly (ContextAllocator): a large
// make on the Go heap zeroes, and on these machines faults in, the whole
// buffer in one call that cannot look at a context (see bigAllocBytes).
// Unlike the Go heap it returns large buffers to the OS at once on Free, so
// it belongs under a pool that keeps them for reuse. Safe for concurrent
// use.
type MappedAllocator struct {
	heap memory.Allocator
	min  int // the smallest buffer mapped

	mu   sync.Mutex
	maps map[*byte][]byte // first byte → the whole mapping

	unmaps unmapper // large mappings freed, unmapped off the caller's goroutine
}

var (
	_ memory.Allocator = (*MappedAllocator)(nil)
	_ ContextAllocator = (*MappedAllocator)(nil)
)

// NewMappedAllocator returns a MappedAllocator; on systems without
// anonymous mappings it is the Go allocator.
func NewMappedAllocator() *MappedAllocator {
	return NewMappedAllocatorAbove(bigAllocBytes, memory.NewGoAllocator())
}

// NewMappedAllocatorAbove returns a MappedAllocator that maps buffers of
// min bytes and more and takes smaller ones, and every buffer when a
// mapping fails, from heap. Long-lived buffers (a memory sink's merged
// records, a benchmark's input) use it to stay out of the Go heap, where
// they would raise the collector's heap goal. As with any memory outside
// the Go heap, a value taken from a buffer without copying it must not
// outlive the buffer: it would fault instead of keeping it alive.
func NewMappedAllocatorAbove(min int, heap memory.Allocator) *MappedAllocator {
	return &MappedAllocator{heap: heap, min: max(min, 1), maps: map[*byte][]byte{}}
}

// Allocate implements memory.Allocator. A large buffer is mapped but not
// faulted in: writing it does that.
func (a *MappedAllocator) Allocate(size int) []byte {
	if size < a.min || !canMap {
		return a.heap.Allocate(size)
	}
	b, err := sysMap(pageRound(size))
	if err != nil {
		return a.heap.Allocate(size)
	}
	a.keep(b)
	return b[:size]
}

// pageRound rounds size up to whole pages: a mapping has them anyway, and
// Reallocate grows a buffer within its mapping in place.
func pageRound(size int) int { return (size + pageBytes - 1) &^ (pageBytes - 1) }

// AllocateContext implements ContextAllocator: a large buffer is mapped
// and faulted in a megabyte at a time, checking ctx before each.
func (a *MappedAllocator) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	return a.allocateFaulting(ctx, size, size)
}

// allocateFaulting is AllocateContext for a buffer of size bytes of which
// only the first fault are faulted in (a pool's size class is larger than
// the request; its tail stays unbacked until written).
func (a *MappedAllocator) allocateFaulting(ctx context.Context, size, fault int) ([]byte, error) {
	if size < a.min || !canMap {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return a.heap.Allocate(size), nil
	}
	b, err := sysMap(pageRound(size))
	if err != nil {
		return nil, err
	}
	if err := faultContext(ctx, b[:min(fault, size)]); err != nil {
		sysUnmap(b)
		return nil, err
	}
	a.keep(b)
	return b[:size], nil
}

func (a *MappedAllocator) keep(b []byte) {
	a.mu.Lock()
	a.maps[unsafe.SliceData(b)] = b
	a.mu.Unlock()
}

// Reallocate implements memory.Allocator.
func (a *MappedAllocator) Reallocate(size int, b []byte) []byte {
	m, mapped := a.mapping(b)
	if !mapped && size < a.min {
		return a.heap.Reallocate(size, b)
	}
	if mapped && size <= len(m) { // within the mapping: grow or shrink in place
		old := len(b)
		b = m[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// mapping returns the whole mapping b starts, if b is a mapped buffer.
func (a *MappedAllocator) mapping(b []byte) ([]byte, bool) {
	if cap(b) == 0 {
		return nil, false
	}
	a.mu.Lock()
	m, ok := a.maps[unsafe.SliceData(b)]
	a.mu.Unlock()
	return m, ok
}

// Free implements memory.Allocator: a mapped buffer is unmapped (one of
// asyncUnmapBytes or more on a goroutine of the allocator's, moments
// later: WaitUnmapped waits for it). It leaves MappedBytes at once.
func (a *MappedAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := unsafe.SliceData(b)
	a.mu.Lock()
	m, ok := a.maps[p]
	delete(a.maps, p)
	a.mu.Unlock()
	if ok {
		a.unmaps.unmap(m)
		return
	}
	a.heap.Free(b)
}

// WaitUnmapped returns once every buffer freed so far is unmapped.
func (a *MappedAllocator) WaitUnmapped() { a.unmaps.wait() }

// MappedBytes returns the bytes of the buffers now mapped.
func (a *MappedAllocator) MappedBytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	for _, m := range a.maps {
		n += int64(len(m))
	}
	return n
}
