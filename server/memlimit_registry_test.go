package server

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestReclaimAfterLimitPanic: the registry follows Allocate, Reallocate
// (in place and moved) and Free; a query that did not panic is never
// reclaimed; after a panic past twice the limit, reclaim frees exactly the
// buffers still registered (the checked allocator ends at zero), leaves
// the Underlying (sink) buffers alone, and brings the query's and the
// pool's accounts to what those hold.
func TestReclaimAfterLimitPanic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	pool := &memoryPool{}
	a := newQueryAllocator(mem, 1000)
	a.pool = pool
	op := a.ForOperator("Project")
	b1 := op.Allocate(100)
	b2 := a.Allocate(200)
	b2 = a.Reallocate(300, b2)
	b3 := op.Allocate(50)
	if a.liveBuffers() != 3 || a.inUse.Load() != 450 {
		t.Fatalf("%d buffers, %d bytes registered; want 3, 450", a.liveBuffers(), a.inUse.Load())
	}
	a.Free(b3)
	if n, bufs := a.reclaim(); n != 0 || bufs != 0 || a.liveBuffers() != 2 {
		t.Fatalf("a query that did not panic was reclaimed (%d bytes, %d buffers)", n, bufs)
	}
	if err := a.Reserve(100); err != nil { // a Go-heap structure of an unwound frame
		t.Fatal(err)
	}
	sink := a.Underlying().Allocate(40) // a sink's long-lived buffer: not the query's to free
	func() {
		defer func() {
			if _, ok := recover().(*MemoryLimitError); !ok {
				t.Fatal("no MemoryLimitError panic past twice the limit")
			}
		}()
		op.Allocate(2000)
	}()
	n, bufs := a.reclaim()
	if bufs != 2 || n != 100+300+100 {
		t.Fatalf("reclaimed %d bytes in %d buffers, want 500 in 2", n, bufs)
	}
	if a.inUse.Load() != 40 || pool.inUse.Load() != 40 || mem.CurrentAlloc() != 40 {
		t.Fatalf("after reclaim: query %d, pool %d, allocator %d; want the sink's 40", a.inUse.Load(), pool.inUse.Load(), mem.CurrentAlloc())
	}
	a.Underlying().Free(sink)
	if a.inUse.Load() != 0 || pool.inUse.Load() != 0 {
		t.Fatalf("after the sink's free: query %d, pool %d", a.inUse.Load(), pool.inUse.Load())
	}
	_ = b1
	_ = b2
}

// BenchmarkQueryAllocator measures an Allocate/Free pair through a
// query's allocator (accounting and the live-buffer registry) against the
// same pair on the allocator under it, in the same run.
func BenchmarkQueryAllocator(b *testing.B) {
	const size = 512
	b.Run("parent", func(b *testing.B) {
		mem := memory.NewGoAllocator()
		for i := 0; i < b.N; i++ {
			mem.Free(mem.Allocate(size))
		}
	})
	b.Run("query", func(b *testing.B) {
		a := newQueryAllocator(memory.NewGoAllocator(), 1<<40)
		a.pool = &memoryPool{}
		op := a.ForOperator("Project")
		held := make([][]byte, 0, 64) // a batch's worth of live buffers
		for range 64 {
			held = append(held, op.Allocate(size))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			op.Free(op.Allocate(size))
		}
		b.StopTimer()
		for _, h := range held {
			op.Free(h)
		}
	})
}
