package vector

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// SlabAllocator hands out the small buffers of one output record from a
// single allocation of the underlying allocator, the slab, whose fresh
// pages are mapped in by one system call (prefault) before any is written.
//
// Why: a join's output record is kept (a memory sink holds it), so its
// buffers are fresh memory every epoch. Its large string data buffers are
// prefaulted one by one (gatherChunksBinary), but its fixed-width values,
// offsets and validity bitmaps (a few KB to a few tens of KB each, below
// prefaultMin) were separate allocations whose pages the copy faulted in
// one trap at a time, which on these machines costs about twice as much
// per page as MADV_POPULATE_WRITE (docs/performance.md, "q20: the output
// gather's small buffers in one slab").
//
// Requests that do not fit in what is left of the slab go to the
// underlying allocator (GatherChunksSlabBytes sizes a slab for a gather's
// buffers other than string data, which are prefaulted on their own).
// The slab is freed when its creator has called Done and every buffer
// handed out of it has been freed: a record's columns released at
// different times keep the slab until the last one goes. Allocations are
// for one goroutine (the gather's); Free may come from any goroutine.
type SlabAllocator struct {
	under memory.Allocator
	slab  []byte
	used  int
	// lo and hi bound the slab's addresses; fixed once made, so a Free
	// from another goroutine reads no field the allocator writes.
	lo, hi uintptr
	// refs counts the buffers handed out of the slab and not freed, plus
	// one for the creator until Done.
	refs atomic.Int64
}

// NewSlabAllocator returns a slab allocator over under whose slab holds
// size bytes (rounded up to 64); size 0 makes no slab.
func NewSlabAllocator(under memory.Allocator, size int) *SlabAllocator {
	a := &SlabAllocator{under: under}
	a.refs.Store(1)
	if size > 0 {
		a.slab = under.Allocate(roundUp64(size))
		a.lo = uintptr(unsafe.Pointer(unsafe.SliceData(a.slab)))
		a.hi = a.lo + uintptr(len(a.slab))
		prefault(a.slab)
	}
	return a
}

func roundUp64(n int) int { return (n + 63) &^ 63 }

// Allocate returns size zeroed bytes, from the slab when they fit.
func (a *SlabAllocator) Allocate(size int) []byte {
	n := roundUp64(size)
	if size <= 0 || a.used+n > len(a.slab) {
		return a.under.Allocate(size)
	}
	b := a.slab[a.used : a.used+size : a.used+n]
	a.used += n
	a.refs.Add(1)
	return b
}

// Reallocate grows or shrinks b to size, keeping its bytes.
func (a *SlabAllocator) Reallocate(size int, b []byte) []byte {
	if !a.owns(b) {
		return a.under.Reallocate(size, b)
	}
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free returns b: to the underlying allocator when it did not come from
// the slab; else it drops the slab's count, freeing the slab at zero.
func (a *SlabAllocator) Free(b []byte) {
	if !a.owns(b) {
		a.under.Free(b)
		return
	}
	a.release()
}

// Done drops the creator's reference: no more allocations will be made.
func (a *SlabAllocator) Done() { a.release() }

func (a *SlabAllocator) release() {
	// At zero no buffer of the slab is out and no allocation will come,
	// so nothing reads slab after this (owns reads lo and hi only).
	if a.refs.Add(-1) == 0 && a.slab != nil {
		a.under.Free(a.slab)
	}
}

// owns reports whether b lies in the slab. A buffer of the underlying
// allocator freed after the slab was cannot lie there: it was allocated
// while the slab was live (no allocation follows Done).
func (a *SlabAllocator) owns(b []byte) bool {
	if cap(b) == 0 || a.lo == a.hi {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= a.lo && p < a.hi
}
