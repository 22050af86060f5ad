package harness

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// PeakAllocator wraps an allocator and records the bytes currently
// allocated through it and the largest that figure reached: the "peak
// memory" of a workload is the peak of the allocator the engine ran with.
// Safe for concurrent use.
type PeakAllocator struct {
	under     memory.Allocator
	cur, peak atomic.Int64
}

// NewPeakAllocator wraps under.
func NewPeakAllocator(under memory.Allocator) *PeakAllocator {
	return &PeakAllocator{under: under}
}

func (p *PeakAllocator) grow(delta int64) {
	c := p.cur.Add(delta)
	for {
		old := p.peak.Load()
		if c <= old || p.peak.CompareAndSwap(old, c) {
			return
		}
	}
}

// Allocate implements memory.Allocator.
func (p *PeakAllocator) Allocate(size int) []byte {
	b := p.under.Allocate(size)
	p.grow(int64(len(b)))
	return b
}

// Reallocate implements memory.Allocator.
func (p *PeakAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := p.under.Reallocate(size, b)
	p.grow(int64(len(nb) - old))
	return nb
}

// Free implements memory.Allocator.
func (p *PeakAllocator) Free(b []byte) {
	p.cur.Add(-int64(len(b)))
	p.under.Free(b)
}

// Current is the number of bytes allocated and not yet freed.
func (p *PeakAllocator) Current() int64 { return p.cur.Load() }

// Peak is the largest Current has been since creation or the last
// ResetPeak.
func (p *PeakAllocator) Peak() int64 { return p.peak.Load() }

// ResetPeak restarts the peak from the current figure.
func (p *PeakAllocator) ResetPeak() { p.peak.Store(p.cur.Load()) }
