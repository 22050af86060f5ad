package server

import (
	"context"

	"github.com/arrowstream/arrowstream/vector"
)

// A query's allocator forwards the session pool's interruptible
// allocation and its cache of large operator buffers, so that a query's
// hash-join table, sort scratch and large concatenations are made with
// context checks and reused across queries (vector.ContextAllocator,
// vector.LargeBufferCache). The cache's buffers are Go-heap-like memory the
// operators reserve (vector.MemoryReserver), not Arrow bytes: they are not
// counted here.
var (
	_ vector.ContextAllocator = (*queryAllocator)(nil)
	_ vector.LargeBufferCache = (*queryAllocator)(nil)
	_ vector.ContextAllocator = (*operatorAllocator)(nil)
	_ vector.LargeBufferCache = (*operatorAllocator)(nil)
)

// AllocateContext implements vector.ContextAllocator, accounting as
// Allocate does; the bytes are given back when ctx ends first.
func (a *queryAllocator) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	return a.allocateContext(ctx, size, "")
}

func (a *queryAllocator) allocateContext(ctx context.Context, size int, op string) ([]byte, error) {
	a.allocation(int64(size), op)
	b, err := vector.AllocateContext(ctx, a.parent, size)
	if err != nil {
		a.undo(int64(size))
		return nil, err
	}
	a.track(b)
	return b, nil
}

// TakeLarge implements vector.LargeBufferCache from the parent's cache, or
// by mapping a buffer when the parent has none.
func (a *queryAllocator) TakeLarge(ctx context.Context, size int) ([]byte, error) {
	if c, ok := a.parent.(vector.LargeBufferCache); ok {
		return c.TakeLarge(ctx, size)
	}
	return vector.MapLarge(ctx, size)
}

// ReturnLarge implements vector.LargeBufferCache.
func (a *queryAllocator) ReturnLarge(b []byte) {
	if c, ok := a.parent.(vector.LargeBufferCache); ok {
		c.ReturnLarge(b)
		return
	}
	vector.UnmapLarge(b)
}

func (o *operatorAllocator) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	return o.a.allocateContext(ctx, size, o.op)
}

func (o *operatorAllocator) TakeLarge(ctx context.Context, size int) ([]byte, error) {
	return o.a.TakeLarge(ctx, size)
}

func (o *operatorAllocator) ReturnLarge(b []byte) { o.a.ReturnLarge(b) }
