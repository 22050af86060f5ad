package vector

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// bigAllocBytes is the size from which an operator's pointer-free working
// buffer (a hash join's slot table, the build keys' hashes and words, a
// sort's permutation and key pairs) comes from its allocator's
// LargeBufferCache, when it has one, rather than from make. Below it a
// buffer is an ordinary slice.
//
// Why: on the VMs this engine runs on, the first touch of a page costs
// about 4–5 ms per MB, and the Go runtime zeroes a large object it reuses
// (memory its scavenger had returned to the OS) inside make, in one call
// that cannot look at a context: a 256 MB slot table is a second in which
// a cancelled query cannot stop. The cache hands out a buffer it kept
// (zeroing it a megabyte at a time: its pages are resident) or maps a new
// one (the kernel hands out zero pages lazily) and faults it in a megabyte
// at a time, checking the context between, so a cancel waits for at most
// one megabyte of work.
//
// Without a cache (a plain Go allocator) large buffers stay ordinary
// slices: mapping fresh memory every time would cost the page faults a
// warm Go heap saves (measured: a 1M-row sort 3 times slower), so the
// cancellation bound is the pool's (the session's default allocator).
const bigAllocBytes = 1 << 20

// touchChunkBytes is how much memory faultContext faults in, or
// clearContext zeroes, between two context checks. Faulting in a quarter
// megabyte costs about 1 ms of CPU on these VMs; under heavy load (a load
// average of 40 on 2 cores) a whole megabyte between checks was seen to
// hold a cancelled sort for hundreds of milliseconds.
const touchChunkBytes = 256 << 10

// LargeBufferCache is implemented by an allocator that keeps operators'
// large working buffers (outside Arrow: hash tables, sort scratch) for
// reuse after they are returned, so that the next query's buffers need
// no page faults (PoolAllocator). Wrapping allocators forward it. The
// bytes are not Arrow allocations: an operator accounts for them as Go-heap
// memory (MemoryReserver).
type LargeBufferCache interface {
	// TakeLarge returns a zeroed buffer of at least size bytes, zeroing
	// or faulting it in a megabyte at a time and checking ctx between.
	TakeLarge(ctx context.Context, size int) ([]byte, error)
	// ReturnLarge gives back a buffer from TakeLarge (whole, as taken).
	ReturnLarge(b []byte)
}

// bigMem owns the large buffers of one operator, from the cache of its
// allocator (LargeBufferCache); without one (the zero value) they are Go
// slices. release returns everything still held. A buffer from bigAlloc is
// valid until bigFree or release. Not safe for concurrent use.
type bigMem struct {
	cache LargeBufferCache
	maps  map[*byte][]byte // first byte of a buffer → the whole buffer
}

// newBigMem returns a bigMem drawing on mem's cache, if it has one.
func newBigMem(mem memory.Allocator) bigMem {
	c, _ := mem.(LargeBufferCache)
	return bigMem{cache: c}
}

// mapFaulted maps size bytes and faults them in a megabyte at a time,
// checking ctx before each.
func mapFaulted(ctx context.Context, size int) ([]byte, error) {
	b, err := sysMap(size)
	if err != nil {
		return nil, err
	}
	if err := faultContext(ctx, b); err != nil {
		sysUnmap(b)
		return nil, err
	}
	return b, nil
}

// faultContext touches every page of b (fresh mapped memory)
// touchChunkBytes at a time, checking ctx before each.
func faultContext(ctx context.Context, b []byte) error {
	for lo := 0; lo < len(b); lo += touchChunkBytes {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+touchChunkBytes, len(b))
		for p := lo; p < hi; p += pageBytes {
			b[p] = 0 // fault the page in
		}
	}
	return nil
}

// clearContext zeroes b touchChunkBytes at a time, checking ctx before
// each.
func clearContext(ctx context.Context, b []byte) error {
	for lo := 0; lo < len(b); lo += touchChunkBytes {
		if err := ctx.Err(); err != nil {
			return err
		}
		clear(b[lo:min(lo+touchChunkBytes, len(b))])
	}
	return nil
}

// bigAlloc returns a zeroed slice of n Ts (T must hold no pointers: the
// garbage collector does not scan mapped memory). Buffers of at least
// bigAllocBytes come from m's cache, made a megabyte at a time with ctx
// checked before each; on error nothing stays allocated. With a nil m or
// one without a cache the slice is an ordinary one.
func bigAlloc[T any](ctx context.Context, m *bigMem, n int) ([]T, error) {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if m == nil || m.cache == nil || size < bigAllocBytes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return make([]T, n), nil
	}
	b, err := m.cache.TakeLarge(ctx, size)
	if err != nil {
		return nil, err
	}
	if m.maps == nil {
		m.maps = map[*byte][]byte{}
	}
	m.maps[unsafe.SliceData(b)] = b
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// bigGrow is grow for buffers of m: s itself when it holds n, else a new
// buffer from bigAlloc (s is freed).
func bigGrow[T any](ctx context.Context, m *bigMem, s []T, n int) ([]T, error) {
	if cap(s) >= n {
		return s[:n], nil
	}
	bigFree(m, s)
	return bigAlloc[T](ctx, m, n)
}

// bigFree returns s (a slice from bigAlloc of m, or any other slice, which
// is left to the garbage collector). s must not be used afterwards.
func bigFree[T any](m *bigMem, s []T) {
	if m == nil || cap(s) == 0 || m.maps == nil {
		return
	}
	p := (*byte)(unsafe.Pointer(unsafe.SliceData(s[:1])))
	if b, ok := m.maps[p]; ok {
		delete(m.maps, p)
		m.cache.ReturnLarge(b)
	}
}

// release returns every buffer of m.
func (m *bigMem) release() {
	for p, b := range m.maps {
		delete(m.maps, p)
		m.cache.ReturnLarge(b)
	}
}

// errMap wraps a failed mapping with its size.
func errMap(size int, err error) error {
	return fmt.Errorf("vector: map %d bytes: %w", size, err)
}

// MapLarge is LargeBufferCache.TakeLarge without a cache, for allocators
// that forward the interface over one that has none: a new mapping of
// size bytes faulted in a megabyte at a time with ctx checks (a Go-heap
// slice where mapping is not supported). UnmapLarge returns it.
func MapLarge(ctx context.Context, size int) ([]byte, error) {
	if !canMap {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return make([]byte, size), nil
	}
	return mapFaulted(ctx, size)
}

// UnmapLarge returns a buffer from MapLarge.
func UnmapLarge(b []byte) {
	if canMap {
		sysUnmap(b)
	}
}
