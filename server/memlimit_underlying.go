package server

import (
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Long-lived buffers of a query (a memory sink's merged records of a
// streaming table created through the server) ask their allocator for
// its Underlying one (memsink's longLived): the allocator under the
// server's pool, which for the default allocator is the Go heap, not
// mapped memory. A buffer that lives long is the one most likely to be
// read after a release by mistake: on the Go heap that read sees stale
// bytes, in unmapped memory it is a segfault that takes the server down.
// The query's accounting and limits still apply to them.

// underlyingAllocator is a query's allocator drawing from under the pool.
type underlyingAllocator struct {
	a   *queryAllocator
	mem memory.Allocator
	op  string
}

var _ memory.Allocator = (*underlyingAllocator)(nil)

// underlyingOf returns the allocator under mem's pool: mem's Underlying
// when it has one, else mem itself.
func underlyingOf(mem memory.Allocator) memory.Allocator {
	if u, ok := mem.(interface{ Underlying() memory.Allocator }); ok {
		return u.Underlying()
	}
	return mem
}

// Underlying returns the query's allocator over the allocator under the
// server's pool (vector.PoolAllocator.Underlying), still accounted.
func (a *queryAllocator) Underlying() memory.Allocator {
	return &underlyingAllocator{a: a, mem: underlyingOf(a.parent)}
}

// Underlying is the query's Underlying, labelled with the operator.
func (o *operatorAllocator) Underlying() memory.Allocator {
	return &underlyingAllocator{a: o.a, mem: underlyingOf(o.a.parent), op: o.op}
}

func (u *underlyingAllocator) Allocate(size int) []byte {
	u.a.allocation(int64(size), u.op)
	u.a.kept.Add(int64(size))
	return u.mem.Allocate(size)
}

func (u *underlyingAllocator) Reallocate(size int, b []byte) []byte {
	u.a.allocation(int64(size-len(b)), u.op)
	u.a.kept.Add(int64(size - len(b)))
	return u.mem.Reallocate(size, b)
}

func (u *underlyingAllocator) Free(b []byte) {
	u.a.kept.Add(-int64(len(b)))
	u.mem.Free(b)
	u.a.add(-int64(len(b)), "")
	u.a.ret.released(int64(len(b)))
}

// Reserve implements vector.MemoryReserver on the query's account.
func (u *underlyingAllocator) Reserve(n int64) error { return u.a.reserveFor(n, u.op) }
