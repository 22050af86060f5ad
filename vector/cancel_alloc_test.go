package vector_test

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// queryAlloc stands for a server query's allocator in the cancellation
// benchmarks: it counts the Arrow bytes one query holds over a shared
// pool (as the server's per-query allocator does over the session's pool)
// and forwards the pool's interruptible allocation and large-buffer
// cache, as the server's does.
type queryAlloc struct {
	pool  *vector.PoolAllocator
	bytes atomic.Int64
}

var (
	_ vector.ContextAllocator = (*queryAlloc)(nil)
	_ vector.LargeBufferCache = (*queryAlloc)(nil)
)

func (a *queryAlloc) Allocate(size int) []byte {
	a.bytes.Add(int64(size))
	return a.pool.Allocate(size)
}

func (a *queryAlloc) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	b, err := a.pool.AllocateContext(ctx, size)
	if err == nil {
		a.bytes.Add(int64(size))
	}
	return b, err
}

func (a *queryAlloc) Reallocate(size int, b []byte) []byte {
	a.bytes.Add(int64(size - len(b)))
	return a.pool.Reallocate(size, b)
}

func (a *queryAlloc) Free(b []byte) {
	a.bytes.Add(-int64(len(b)))
	a.pool.Free(b)
}

func (a *queryAlloc) TakeLarge(ctx context.Context, size int) ([]byte, error) {
	return a.pool.TakeLarge(ctx, size)
}

func (a *queryAlloc) ReturnLarge(b []byte) { a.pool.ReturnLarge(b) }

// newBenchPool is the session's allocator as the cancellation benchmarks
// use it: the default allocator, a pool over mapped memory (CANCEL_BASE=go:
// a pool over the Go heap).
func newBenchPool() *vector.PoolAllocator {
	if os.Getenv("CANCEL_BASE") == "go" {
		return vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	}
	return vector.NewDefaultAllocator()
}

var _ memory.Allocator = (*queryAlloc)(nil)
