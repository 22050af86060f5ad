//go:build linux

package vector

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14): fault in a
// range's pages writable, in the kernel, without a trap per page.
const madvPopulateWrite = 23

// prefaultMin is the smallest buffer prefault maps in: below it the
// system calls (one to a few microseconds each here) can cost more than
// the faults they save, and the buffer is likely in pages the process
// already touched. Four pages: when they are fresh, populating saves
// about 5 µs a page (more under load); when they are mapped, the one
// mincore call costs 1–3 µs. (Session 33's 64 KiB left q20's smaller
// gathered string columns, 20–60 KB each, to a trap per page.)
const prefaultMin = 16 << 10

// prefaultSpan is how many pages one mincore call of prefault looks at
// (its residency vector lives on the stack): 2 MiB.
const prefaultSpan = 512

// prefault maps in, by system calls rather than a trap per page, the
// pages of b that are not mapped yet, before a copy writes all of b. A
// buffer that is kept long (a join's output, held by the memory sink) is
// fresh memory, whose pages the copy would fault in one trap at a time.
//
// What it saves (docs/performance.md, "Session 34: page faults"): on these
// VMs a trap costs about 12.5 µs a page; MADV_POPULATE_WRITE about 0.8 µs
// a page, plus about 6 µs at the first touch that follows (the
// hypervisor's side of the mapping), so about 7 µs in all.
//
// Which pages: mincore reports each page's residency, and only the runs of
// pages not mapped are populated. The pages at b's ends that b covers in
// part are among them: the copy writes into them too. (Session 33's
// version populated only whole pages and skipped b altogether when its
// first whole page was mapped; a large buffer the Go heap places partly in
// memory it reused and partly in fresh memory then kept its traps:
// GatherChunks' 22 traps an epoch of q20.) Populating writes no byte: a
// mapped page keeps its contents and a new one reads as zero, as a faulted
// one does. An older kernel's refusal (EINVAL) leaves the copy to fault
// the pages in.
func prefault(b []byte) {
	if len(b) < prefaultMin {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := start &^ (pageBytes - 1)
	hi := (start + uintptr(len(b)) + pageBytes - 1) &^ (pageBytes - 1)
	var vec [prefaultSpan]byte
	for base := lo; base < hi; base += prefaultSpan * pageBytes {
		n := min(int((hi-base)/pageBytes), prefaultSpan)
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, base, uintptr(n)*pageBytes, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			return
		}
		for p := 0; p < n; {
			if vec[p]&1 != 0 {
				p++
				continue
			}
			q := p + 1
			for q < n && vec[q]&1 == 0 {
				q++
			}
			if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base+uintptr(p)*pageBytes, uintptr(q-p)*pageBytes, madvPopulateWrite); errno != 0 {
				return
			}
			p = q
		}
	}
}
