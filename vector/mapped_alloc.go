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

	mu   sync.Mutex
	maps map[*byte][]byte // first byte → the whole mapping
}

var (
	_ memory.Allocator = (*MappedAllocator)(nil)
	_ ContextAllocator = (*MappedAllocator)(nil)
)

// NewMappedAllocator returns a MappedAllocator; on systems without
// anonymous mappings it is the Go allocator.
func NewMappedAllocator() *MappedAllocator {
	return &MappedAllocator{heap: memory.NewGoAllocator(), maps: map[*byte][]byte{}}
}

// Allocate implements memory.Allocator. A large buffer is mapped but not
// faulted in: writing it does that.
func (a *MappedAllocator) Allocate(size int) []byte {
	if size < bigAllocBytes || !canMap {
		return a.heap.Allocate(size)
	}
	b, err := sysMap(size)
	if err != nil {
		return a.heap.Allocate(size)
	}
	a.keep(b)
	return b
}

// AllocateContext implements ContextAllocator: a large buffer is mapped
// and faulted in a megabyte at a time, checking ctx before each.
func (a *MappedAllocator) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	return a.allocateFaulting(ctx, size, size)
}

// allocateFaulting is AllocateContext for a buffer of size bytes of which
// only the first fault are faulted in (a pool's size class is larger than
// the request; its tail stays unbacked until written).
func (a *MappedAllocator) allocateFaulting(ctx context.Context, size, fault int) ([]byte, error) {
	if size < bigAllocBytes || !canMap {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return a.heap.Allocate(size), nil
	}
	b, err := sysMap(size)
	if err != nil {
		return nil, err
	}
	if err := faultContext(ctx, b[:min(fault, size)]); err != nil {
		sysUnmap(b)
		return nil, err
	}
	a.keep(b)
	return b, nil
}

func (a *MappedAllocator) keep(b []byte) {
	a.mu.Lock()
	a.maps[unsafe.SliceData(b)] = b
	a.mu.Unlock()
}

// Reallocate implements memory.Allocator.
func (a *MappedAllocator) Reallocate(size int, b []byte) []byte {
	if !a.mapped(b) && size < bigAllocBytes {
		return a.heap.Reallocate(size, b)
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *MappedAllocator) mapped(b []byte) bool {
	if cap(b) == 0 {
		return false
	}
	a.mu.Lock()
	_, ok := a.maps[unsafe.SliceData(b)]
	a.mu.Unlock()
	return ok
}

// Free implements memory.Allocator: a mapped buffer is unmapped.
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
		sysUnmap(m)
		return
	}
	a.heap.Free(b)
}

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
