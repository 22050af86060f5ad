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
// system call (about a microsecond) can cost more than the faults it
// saves, and the buffer is likely in pages the process already touched.
const prefaultMin = 64 << 10

// prefault maps in, in one system call, the pages lying wholly inside b
// that the process has not touched yet, before a copy writes b. A buffer
// that is kept long (a join's output, held by the memory sink) is fresh
// memory: faulting its pages in one at a time as the copy reaches them
// cost about twice as much CPU per page on these machines as
// MADV_POPULATE_WRITE does ("Machine and library facts" and the q20
// section of docs/performance.md). The contents of pages already mapped
// do not change, and a new page reads as zero, as a faulted one does; an
// older kernel's refusal (EINVAL) leaves the copy to fault them as
// before.
func prefault(b []byte) {
	if len(b) < prefaultMin {
		return
	}
	addr := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	lo := (pageBytes - addr%pageBytes) % pageBytes
	hi := lo + (len(b)-lo)/pageBytes*pageBytes
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(b[lo:hi], madvPopulateWrite)
}
