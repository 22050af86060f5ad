package vector

import (
	"context"
	"slices"
)

var _ LargeBufferCache = (*PoolAllocator)(nil)

// TakeLarge implements LargeBufferCache: the smallest retained buffer of
// size to twice size bytes, zeroed a megabyte at a time (its pages are
// resident, so that is a memclr, not page faults), or else a new mapping
// faulted in a megabyte at a time; ctx is checked between megabytes. A
// retained buffer stays the pool's if ctx ends while it is zeroed.
func (p *PoolAllocator) TakeLarge(ctx context.Context, size int) ([]byte, error) {
	if !canMap {
		return make([]byte, size), nil
	}
	p.mu.Lock()
	best := -1
	for i, b := range p.large {
		if len(b) >= size && len(b) <= 2*size && (best < 0 || len(b) < len(p.large[best])) {
			best = i
		}
	}
	var b []byte
	if best >= 0 {
		b = p.large[best]
		p.large = slices.Delete(p.large, best, best+1)
		p.largeRetained -= len(b)
	}
	p.mu.Unlock()
	if b == nil {
		// Whole megabytes, so that a slightly larger later request (one
		// more slot, a few more rows) finds this buffer again.
		return mapFaulted(ctx, (size+bigAllocBytes-1)/bigAllocBytes*bigAllocBytes)
	}
	if err := clearContext(ctx, b); err != nil {
		p.ReturnLarge(b)
		return nil, err
	}
	return b, nil
}

// ReturnLarge implements LargeBufferCache: b is kept for reuse while the
// retained large buffers stay within the pool's retention limit (the
// largest are unmapped first to make room for a smaller one), else
// unmapped. Over a poisoning allocator nothing is kept.
func (p *PoolAllocator) ReturnLarge(b []byte) {
	if !canMap {
		return
	}
	p.mu.Lock()
	if p.passThrough || len(b) > p.maxRetained {
		p.mu.Unlock()
		p.unmaps.unmap(b)
		return
	}
	var drop [][]byte
	for p.largeRetained+len(b) > p.maxRetained {
		// Evict the largest retained buffer.
		i := 0
		for j, x := range p.large {
			if len(x) > len(p.large[i]) {
				i = j
			}
		}
		drop = append(drop, p.large[i])
		p.largeRetained -= len(p.large[i])
		p.large = slices.Delete(p.large, i, i+1)
	}
	p.large = append(p.large, b)
	p.largeRetained += len(b)
	p.mu.Unlock()
	for _, x := range drop {
		p.unmaps.unmap(x)
	}
}

// RetainedLarge returns the bytes of large buffers the pool keeps.
func (p *PoolAllocator) RetainedLarge() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.largeRetained
}
