package server

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestQueryAllocatorUnderlying: a query's allocator (and an operator's
// view of it) forwards Underlying, so that memsink's long-lived records
// come from the Go heap under the server's pool rather than from mapped
// memory, and stay accounted to the query: the query's own large
// allocation is mapped (the control), the same size from Underlying is
// not, counts against the query while held and returns it to zero.
func TestQueryAllocatorUnderlying(t *testing.T) {
	pool := vector.NewDefaultAllocator()
	defer pool.Close()
	a := newQueryAllocator(pool, 64<<20)
	const size = 8 << 20
	before := pool.MappedBytes()
	b := a.Allocate(size)
	if pool.MappedBytes() <= before {
		t.Skip("the default allocator maps nothing here: nothing to tell apart")
	}
	a.Free(b)
	for _, mem := range []memory.Allocator{a, a.ForOperator("memory sink")} {
		u, ok := mem.(interface{ Underlying() memory.Allocator })
		if !ok {
			t.Fatalf("%T does not forward Underlying: memsink would keep records in mapped memory", mem)
		}
		long := u.Underlying()
		mapped := pool.MappedBytes()
		buf := long.Allocate(size)
		if got := pool.MappedBytes(); got != mapped {
			t.Errorf("%T: a long-lived buffer was mapped (%d bytes mapped, %d before)", mem, got, mapped)
		}
		if got := a.inUse.Load(); got != size {
			t.Errorf("%T: the query holds %d bytes with a long-lived buffer of %d", mem, got, size)
		}
		buf = long.Reallocate(2*size, buf)
		if got := a.inUse.Load(); got != 2*size {
			t.Errorf("%T: the query holds %d bytes after a reallocation to %d", mem, got, 2*size)
		}
		long.Free(buf)
		if got := a.inUse.Load(); got != 0 {
			t.Errorf("%T: %d bytes still accounted after the free", mem, got)
		}
	}
	// Over the limit, the long-lived allocator stops the query as its
	// other allocations do.
	long := a.Underlying()
	buf := long.Allocate(100 << 20)
	if a.limitErr() == nil {
		t.Error("a long-lived allocation past the query's limit did not stop it")
	}
	long.Free(buf)
	if got := a.inUse.Load(); got != 0 {
		t.Errorf("%d bytes still accounted", got)
	}
}
