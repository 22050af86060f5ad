package nexmark

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// peakAllocator counts the bytes allocated through it and remembers the
// maximum held at once (the engine's peak memory in Arrow buffers).
type peakAllocator struct {
	under     memory.Allocator
	cur, peak atomic.Int64
}

func newPeakAllocator(under memory.Allocator) *peakAllocator { return &peakAllocator{under: under} }

func (p *peakAllocator) add(n int64) {
	c := p.cur.Add(n)
	for {
		old := p.peak.Load()
		if c <= old || p.peak.CompareAndSwap(old, c) {
			return
		}
	}
}

func (p *peakAllocator) Allocate(size int) []byte {
	b := p.under.Allocate(size)
	p.add(int64(len(b)))
	return b
}

func (p *peakAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := p.under.Reallocate(size, b)
	p.add(int64(len(nb) - old))
	return nb
}

func (p *peakAllocator) Free(b []byte) {
	p.add(-int64(len(b)))
	p.under.Free(b)
}

// Current is the bytes held now.
func (p *peakAllocator) Current() int64 { return p.cur.Load() }

// Peak is the most bytes held at once so far.
func (p *peakAllocator) Peak() int64 { return p.peak.Load() }
