package vector

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// countdownCtx is a context whose Err is nil for its first n calls and
// context.Canceled afterwards: a cancel that lands in the middle of a
// chunked loop, at a known chunk.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func newCountdownCtx(n int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestDefaultAllocatorInterruptible: the default allocator makes a large
// buffer interruptibly whether or not it has one to reuse: a cancel after
// a few chunks stops a cold 64 MiB allocation and leaves nothing mapped
// or handed out; a buffer it kept is zeroed interruptibly too and stays
// kept; uncancelled, both are zeroed and accounted as mapped.
func TestDefaultAllocatorInterruptible(t *testing.T) {
	if !canMap {
		t.Skip("no mappings on this system")
	}
	const size = 64 << 20
	p := NewDefaultAllocator()
	defer p.Close()
	if _, err := p.AllocateContext(newCountdownCtx(3), size); !errors.Is(err, context.Canceled) {
		t.Fatalf("cold allocation cancelled after 3 chunks: %v, want context.Canceled", err)
	}
	if n := p.MappedBytes(); n != 0 {
		t.Fatalf("%d bytes mapped after a cancelled cold allocation", n)
	}
	b, err := p.AllocateContext(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.MappedBytes(); n != size {
		t.Fatalf("MappedBytes %d with one 64 MiB buffer, want %d", n, size)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 7
	}
	p.Free(b)
	if p.Retained() != size {
		t.Fatalf("pool retained %d after Free, want the buffer", p.Retained())
	}
	if _, err := p.AllocateContext(newCountdownCtx(3), size); !errors.Is(err, context.Canceled) {
		t.Fatalf("reuse cancelled after 3 chunks: %v, want context.Canceled", err)
	}
	if p.Retained() != size {
		t.Fatalf("pool retained %d after a cancelled reuse, want the buffer kept", p.Retained())
	}
	b, err = p.AllocateContext(context.Background(), size-5)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		if b[i] != 0 {
			t.Fatalf("byte %d of a reused buffer not zeroed", i)
		}
	}
	p.Free(b)
	p.Close()
	if n := p.MappedBytes(); n != 0 {
		t.Fatalf("%d bytes still mapped after Close", n)
	}
	// Long-lived buffers (a memory sink's) stay on the Go heap.
	if _, ok := p.Underlying().(*memory.GoAllocator); !ok {
		t.Fatalf("Underlying of the default allocator is %T, want the Go allocator", p.Underlying())
	}
}
