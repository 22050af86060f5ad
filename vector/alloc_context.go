package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ContextAllocator is implemented by an allocator that can make a large
// Arrow buffer without holding up a cancelled query: it zeroes or faults
// the buffer in a megabyte at a time and checks ctx between
// (PoolAllocator, MappedAllocator). Accounting allocators forward it and
// count the bytes as Allocate does. A buffer from AllocateContext is freed
// with Free like any other.
type ContextAllocator interface {
	AllocateContext(ctx context.Context, size int) ([]byte, error)
}

// AllocateContext allocates size bytes from mem, interruptibly when mem is
// a ContextAllocator (for allocators that wrap another and forward it).
func AllocateContext(ctx context.Context, mem memory.Allocator, size int) ([]byte, error) {
	return allocateContext(ctx, mem, size)
}

// allocateContext allocates size bytes from mem, interruptibly when mem is
// a ContextAllocator.
func allocateContext(ctx context.Context, mem memory.Allocator, size int) ([]byte, error) {
	if ca, ok := mem.(ContextAllocator); ok {
		return ca.AllocateContext(ctx, size)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return mem.Allocate(size), nil
}

// newBufferContext returns a buffer of size bytes from mem (allocateContext)
// that frees itself to mem on its last Release.
func newBufferContext(ctx context.Context, mem memory.Allocator, size int) (*memory.Buffer, error) {
	b, err := allocateContext(ctx, mem, size)
	if err != nil {
		return nil, err
	}
	return memory.NewBufferWithAllocator(b, mem), nil
}

var _ ContextAllocator = (*PoolAllocator)(nil)

// AllocateContext implements ContextAllocator: a free buffer of the size
// class is zeroed a megabyte at a time; a new one comes from the
// underlying allocator, interruptibly when it is a ContextAllocator.
func (p *PoolAllocator) AllocateContext(ctx context.Context, size int) ([]byte, error) {
	if size < bigAllocBytes || p.passThrough {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return p.Allocate(size), nil
	}
	c := sizeClass(size)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.retained -= c
		p.mu.Unlock()
		if err := clearContext(ctx, b[:size]); err != nil {
			p.mu.Lock()
			p.free[c] = append(p.free[c], b)
			p.retained += c
			p.mu.Unlock()
			return nil, err
		}
		p.mu.Lock()
		p.class[&b[0]] = c
		p.mu.Unlock()
		return b[:size], nil
	}
	p.mu.Unlock()
	var b []byte
	var err error
	if m, ok := p.under.(*MappedAllocator); ok {
		// Only the bytes asked for are faulted in; the rest of the size
		// class costs no memory until a later request writes it.
		b, err = m.allocateFaulting(ctx, c, size)
	} else {
		b, err = allocateContext(ctx, p.under, c)
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.class[&b[0]] = c
	p.mu.Unlock()
	return b[:size], nil
}
