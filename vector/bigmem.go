package vector

import (
	"context"
	"fmt"
	"unsafe"
)

// bigAllocBytes is the size from which an operator's pointer-free working
// buffer (a hash join's slot table, the build keys' hashes and words, a
// sort's permutation and key pairs) is mapped from the OS rather than made
// on the Go heap. Below it a buffer is an ordinary slice.
//
// Why: on the VMs this engine runs on, the first touch of a page costs
// about 4–5 ms per MB, and the Go runtime zeroes a large object it reuses
// (memory its scavenger had returned to the OS) inside make, in one call
// that cannot look at a context: a 256 MB slot table is a second in which
// a cancelled query cannot stop. A mapping is made at once (the kernel
// hands out zero pages lazily); bigAlloc then faults it in a megabyte at a
// time, checking the context between, so a cancel waits for at most one
// megabyte of faults.
const bigAllocBytes = 1 << 20

// bigMem owns the mapped buffers of one operator. The zero value is
// ready; release unmaps everything still held. A buffer from bigAlloc is
// valid until bigFree or release. Not safe for concurrent use.
type bigMem struct {
	maps map[*byte][]byte // first byte of a mapping → the mapping
}

// bigAlloc returns a zeroed slice of n Ts (T must hold no pointers: the
// garbage collector does not scan mapped memory). Buffers of at least
// bigAllocBytes are mapped and faulted in a megabyte at a time, checking
// ctx before each; on error nothing stays allocated. With a nil m the
// slice is an ordinary one.
func bigAlloc[T any](ctx context.Context, m *bigMem, n int) ([]T, error) {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if m == nil || size < bigAllocBytes || !canMap {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return make([]T, n), nil
	}
	b, err := sysMap(size)
	if err != nil {
		// Mapping failed (address space, a seccomp filter): the heap still
		// works, only without the cancellation bound.
		return make([]T, n), nil
	}
	for lo := 0; lo < len(b); lo += bigAllocBytes {
		if err := ctx.Err(); err != nil {
			sysUnmap(b)
			return nil, err
		}
		hi := min(lo+bigAllocBytes, len(b))
		for p := lo; p < hi; p += pageBytes {
			b[p] = 0 // fault the page in
		}
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
		sysUnmap(b)
	}
}

// release unmaps every buffer of m.
func (m *bigMem) release() {
	for p, b := range m.maps {
		delete(m.maps, p)
		sysUnmap(b)
	}
}

// mappedBytes is the size of m's mappings.
func (m *bigMem) mappedBytes() int64 {
	var n int64
	for _, b := range m.maps {
		n += int64(len(b))
	}
	return n
}

// errMap wraps a failed mapping with its size.
func errMap(size int, err error) error {
	return fmt.Errorf("vector: map %d bytes: %w", size, err)
}
