package server

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
)

// ingestAllocator is the allocator a DoPut stream's batches are decoded
// on. Every byte it allocates counts in the server's memory pool for as
// long as it lives (the rows stay in the table they are appended to, so
// --memory-limit sees them and refuses new work at the limit), and the
// bytes one batch's decoding takes are held against the per-query limit
// (checkBatch), so that one huge message is refused rather than appended.
// Safe for concurrent use.
type ingestAllocator struct {
	parent memory.Allocator
	pool   *memoryPool // nil: no server-wide accounting
	batch  atomic.Int64
}

var _ memory.Allocator = (*ingestAllocator)(nil)

func (a *ingestAllocator) account(n int64) {
	a.batch.Add(n)
	if a.pool != nil {
		a.pool.inUse.Add(n)
	}
}

// Allocate implements memory.Allocator.
func (a *ingestAllocator) Allocate(size int) []byte {
	a.account(int64(size))
	return a.parent.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *ingestAllocator) Reallocate(size int, b []byte) []byte {
	a.account(int64(size - len(b)))
	return a.parent.Reallocate(size, b)
}

// Free implements memory.Allocator: the bytes leave the pool (not the
// batch count: a batch is measured by what decoding it took).
func (a *ingestAllocator) Free(b []byte) {
	if a.pool != nil {
		a.pool.inUse.Add(-int64(len(b)))
	}
	a.parent.Free(b)
}

// checkBatch returns the bytes the batch just decoded took, starting the
// count of the next one, and an error when they exceed limit (0: none).
func (a *ingestAllocator) checkBatch(name string, batch int, limit int64) error {
	n := a.batch.Swap(0)
	if limit > 0 && n > limit {
		return statusf(codes.ResourceExhausted, "RESOURCE_EXHAUSTED: ingest into %q: batch %d decodes to %d bytes, over the per-query memory limit of %d bytes (QueryMemoryBytes, --query-memory): nothing of it was appended; send smaller batches", name, batch, n, limit)
	}
	return nil
}
