package vector

import "unsafe"

// freshSlots returns n zero slots of a hash table that is about to be
// filled, their pages mapped in writable.
//
// Why: a table is read before it is written (a probe looks at a slot before
// it fills it, a rehash walks each moved key's run), and on Linux a read of
// a page the process never touched maps the shared zero page; the write
// that follows faults that page a second time (copy on write, and with two
// threads a TLB flush of the other). A fresh 1 MiB table filled by
// probing took 516 faults for its 256 pages, 256 once it had been written
// first. Tables grow while a streaming query's state grows, and a benchmark
// run's memory is all fresh, so each growth paid twice for its pages (q4's
// join key index: docs/performance.md, "Hash tables' fresh slots written
// before they are probed").
//
// Slots of prefaultMin bytes or more are mapped in by one system call
// (prefault, which leaves memory already mapped alone); smaller ones are
// cleared, whose writes fault each fresh page once and cost a few
// microseconds on pages already mapped. The slots are zero either way.
func freshSlots[T any](n int) []T {
	s := make([]T, n)
	touchSlots(s)
	return s
}

// touchSlots maps in the pages of s (zero slots) writable; see freshSlots.
func touchSlots[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	size := len(s) * int(unsafe.Sizeof(zero))
	if size < prefaultMin {
		clear(s)
		return
	}
	prefault(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size))
}

// PrefaultScratch maps in, by system calls rather than a trap per page,
// the pages of s that are not mapped yet: for scratch just made that the
// caller is about to write whole (contents are left as they are, zero for
// a fresh make). Below prefaultMin bytes it does nothing.
//
// Why: an operator's per-batch scratch is made in a query's first epoch
// (and again when an epoch outgrows it) from a heap whose free pages went
// back to the OS, so every page of it is a first touch: a trap of 11–15 µs
// on these VMs against about 7 µs populated (docs/performance.md,
// "Session 34: page faults", "Session 35: the first epoch"). Call it only
// where the slice was just made: on scratch that is reused every epoch
// the residency check alone (1–3 µs) would be a cost with nothing to save.
func PrefaultScratch[T any](s []T) {
	var zero T
	size := len(s) * int(unsafe.Sizeof(zero))
	if size < prefaultMin {
		return
	}
	prefault(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size))
}
