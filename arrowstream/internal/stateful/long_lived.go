package stateful

import "github.com/apache/arrow/go/v17/arrow/memory"

// longLived returns the allocator for buffers an operator keeps across
// epochs: the one under mem's pool when mem has one (vector.PoolAllocator
// and the server's query allocators say so with Underlying), else mem.
// The pool suits an epoch's temporary buffers, which it hands out again,
// but rounds each buffer up to a power of two: kept for good, that
// rounding is memory the state holds and does not report (up to twice
// its bytes). The server's Underlying allocator still counts against the
// query's limit.
func longLived(mem memory.Allocator) memory.Allocator {
	if p, ok := mem.(interface{ Underlying() memory.Allocator }); ok {
		return p.Underlying()
	}
	return mem
}
