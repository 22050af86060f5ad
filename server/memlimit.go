package server

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// MemoryLimitError is what a query's allocator panics with when an
// allocation would take the query over its memory limit. memory.Allocator
// cannot return errors, so the panic is the signal: the server recovers it
// on its own goroutines and fails the query with ResourceExhausted. An
// engine that allocates on goroutines of its own recovers it at their roots
// and returns it as an error (the server maps it the same way).
type MemoryLimitError struct {
	// Limit is the per-query limit in bytes.
	Limit int64
	// Requested is the size of the allocation that failed.
	Requested int
	// InUse is what the query held when it failed.
	InUse int64
}

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("query exceeded its memory limit of %d bytes (holding %d, allocating %d more)", e.Limit, e.InUse, e.Requested)
}

// queryAllocator counts the bytes one query holds and enforces a limit
// (0: count only). It is safe for concurrent use.
type queryAllocator struct {
	parent memory.Allocator
	limit  int64
	inUse  atomic.Int64
	peak   atomic.Int64
}

var _ memory.Allocator = (*queryAllocator)(nil)

func newQueryAllocator(parent memory.Allocator, limit int64) *queryAllocator {
	return &queryAllocator{parent: parent, limit: limit}
}

// reserve accounts for n more bytes or panics with a *MemoryLimitError.
func (a *queryAllocator) reserve(n int) {
	now := a.inUse.Add(int64(n))
	if a.limit > 0 && n > 0 && now > a.limit {
		a.inUse.Add(-int64(n))
		panic(&MemoryLimitError{Limit: a.limit, Requested: n, InUse: now - int64(n)})
	}
	for {
		p := a.peak.Load()
		if now <= p || a.peak.CompareAndSwap(p, now) {
			return
		}
	}
}

// Allocate implements memory.Allocator.
func (a *queryAllocator) Allocate(size int) []byte {
	a.reserve(size)
	return a.parent.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *queryAllocator) Reallocate(size int, b []byte) []byte {
	a.reserve(size - len(b))
	return a.parent.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *queryAllocator) Free(b []byte) {
	a.inUse.Add(-int64(len(b)))
	a.parent.Free(b)
}
