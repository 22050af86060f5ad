package vector

import "github.com/apache/arrow/go/v17/arrow/memory"

// NewDefaultAllocator returns the allocator a session and a server use
// when given none: a PoolAllocator (256 MiB retained) over a
// MappedAllocator.
//
// Why mapped memory under the pool: a buffer of a megabyte or more made on
// the Go heap is zeroed (and, on these machines, faulted in at 4–5 ms per
// MB) inside one call that cannot look at a context, so a query cancelled
// while its first large buffer is made waits for all of it (measured: a
// cold 32 MB make held a cancelled join build for 635 ms). Over mapped
// memory every large buffer an operator makes interruptibly
// (ContextAllocator, LargeBufferCache) is faulted in a megabyte at a time
// with a context check between, whether the pool had one to reuse or not.
// The cost: a large buffer the pool does not keep (past its retention, or
// after the server trims it) is unmapped, and the next one of that size is
// faulted in again, where the Go heap might have reused warm pages
// (BenchmarkDefaultAllocator measures both); in return freed large
// buffers leave the resident set at once, without waiting for the Go
// scavenger. Small buffers stay on the Go heap.
func NewDefaultAllocator() *PoolAllocator {
	return NewPoolAllocator(NewMappedAllocator(), 0)
}

var _ memory.Allocator = (*PoolAllocator)(nil)

// MappedBytes returns the bytes the pool's underlying allocator has
// mapped outside the Go heap (in use or kept by the pool), and the large
// operator buffers the pool keeps; 0 over an allocator that maps nothing.
// The server counts them with the Go heap against its memory limit.
func (p *PoolAllocator) MappedBytes() int64 {
	var n int64
	if m, ok := p.under.(interface{ MappedBytes() int64 }); ok {
		n = m.MappedBytes()
	}
	return n + int64(p.RetainedLarge())
}
