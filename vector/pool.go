package vector

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// PoolAllocator is a memory.Allocator that keeps freed buffers, by
// power-of-two size class, and hands them out again. On these machines the
// first touch of fresh pages costs far more than the work done in them
// (≈ 60× a copy: docs/performance.md, "Machine and library facts"), so operators that allocate output buffers
// every batch run several times faster on a pool. Reused buffers are zeroed,
// as fresh ones are, because Arrow code may rely on zeroed memory.
//
// Retention is bounded: at most MaxRetained bytes are kept; beyond that,
// freed buffers go back to the underlying allocator. Close returns every
// retained buffer. Safe for concurrent use.
//
// Over an allocator that poisons released memory (a test allocator that
// reports Poisons() == true) the pool retains nothing: every Free goes
// straight through, so a poisoned buffer is never recycled and a read after
// release still shows up in tests that run the engine on a pool.
type PoolAllocator struct {
	under       memory.Allocator
	maxRetained int
	passThrough bool

	mu       sync.Mutex
	free     map[int][][]byte // class → free buffers (full class length)
	class    map[*byte]int    // buffers handed out → class
	retained int              // bytes in free

	// large holds returned LargeBufferCache buffers (mapped), at most
	// maxRetained bytes of them (largeRetained).
	large         [][]byte
	largeRetained int

	unmaps unmapper // large buffers dropped, unmapped off the caller's goroutine
}

// NewPoolAllocator returns a pool over under that retains at most
// maxRetained bytes of free buffers (0: 256 MiB).
func NewPoolAllocator(under memory.Allocator, maxRetained int) *PoolAllocator {
	if maxRetained <= 0 {
		maxRetained = 256 << 20
	}
	p := &PoolAllocator{under: under, maxRetained: maxRetained, free: map[int][][]byte{}, class: map[*byte]int{}}
	if po, ok := under.(interface{ Poisons() bool }); ok && po.Poisons() {
		p.passThrough = true
	}
	return p
}

// sizeClass rounds n up to a power of two of at least 64 bytes.
func sizeClass(n int) int {
	if n <= 64 {
		return 64
	}
	return 1 << bits.Len(uint(n-1))
}

// Allocate implements memory.Allocator.
func (p *PoolAllocator) Allocate(size int) []byte {
	if size == 0 || p.passThrough {
		return p.under.Allocate(size)
	}
	c := sizeClass(size)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.retained -= c
		p.class[unsafe.SliceData(b)] = c
		p.mu.Unlock()
		clear(b[:size])
		return b[:size]
	}
	p.mu.Unlock()
	b := p.under.Allocate(c)
	// A buffer the pool had none of is new memory, fresh pages when the
	// heap gave its free ones back (every buffer of a query's first
	// epoch in a settled process): the asked-for bytes, which the
	// caller fills, are mapped in by one system call instead of a trap
	// a page (prefault leaves mapped pages alone). The class's rest is
	// left unmapped until used.
	prefault(b[:size])
	p.mu.Lock()
	p.class[unsafe.SliceData(b)] = c
	p.mu.Unlock()
	return b[:size]
}

// Reallocate implements memory.Allocator.
func (p *PoolAllocator) Reallocate(size int, b []byte) []byte {
	if p.passThrough {
		return p.under.Reallocate(size, b)
	}
	p.mu.Lock()
	c, ok := p.class[unsafe.SliceData(b)]
	p.mu.Unlock()
	if ok && size <= c {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (p *PoolAllocator) Free(b []byte) {
	if p.passThrough {
		p.under.Free(b)
		return
	}
	ptr := unsafe.SliceData(b)
	p.mu.Lock()
	c, ok := p.class[ptr]
	if !ok {
		p.mu.Unlock()
		p.under.Free(b)
		return
	}
	delete(p.class, ptr)
	full := unsafe.Slice(ptr, c)
	if p.retained+c > p.maxRetained {
		p.mu.Unlock()
		p.under.Free(full)
		return
	}
	p.free[c] = append(p.free[c], full)
	p.retained += c
	p.mu.Unlock()
}

// Underlying returns the allocator the pool draws from, for memory that
// lives long (a memory sink's compacted records): there the pool's
// power-of-two classes (up to twice the bytes) and its keeping of freed
// buffers cost more than reuse saves. Over a MappedAllocator (the default
// allocator) it is that allocator's Go heap: long-lived buffers stay
// where a value still referring to one keeps it alive, unless their owner
// chooses to map them (memsink's OffHeap option).
func (p *PoolAllocator) Underlying() memory.Allocator {
	if m, ok := p.under.(*MappedAllocator); ok {
		return m.heap
	}
	return p.under
}

// WaitUnmapped returns once every large buffer the pool (and a
// MappedAllocator under it) dropped so far is unmapped.
func (p *PoolAllocator) WaitUnmapped() {
	p.unmaps.wait()
	if m, ok := p.under.(*MappedAllocator); ok {
		m.WaitUnmapped()
	}
}

// Retained returns the bytes of free buffers the pool holds.
func (p *PoolAllocator) Retained() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.retained
}

// Close returns every retained free buffer to the underlying allocator
// (and unmaps the retained large buffers). Buffers still in use are
// unaffected and may be freed later.
func (p *PoolAllocator) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.large {
		p.unmaps.unmap(b)
	}
	p.large, p.largeRetained = nil, 0
	for c, l := range p.free {
		for _, b := range l {
			p.under.Free(b)
		}
		delete(p.free, c)
	}
	p.retained = 0
}
