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
// system calls (about a microsecond each) can cost more than the faults
// they save, and the buffer is likely in pages the process already
// touched.
const prefaultMin = 64 << 10

// prefault maps in, in one system call, the pages lying wholly inside b,
// before a copy writes b, when they are fresh. A buffer that is kept long
// (a join's output, held by the memory sink) is fresh memory: faulting its
// pages in one at a time as the copy reaches them cost about twice as
// much CPU per page on these machines as MADV_POPULATE_WRITE does
// (docs/performance.md, "Join output into the memory sink"). Populating
// pages already mapped costs about a third of copying them, so b's first
// whole page decides (mincore): mapped, and b is taken to be a reused
// buffer (a pool's, which clears what it hands out, or one the Go runtime
// zeroed) and left alone. The contents of mapped pages never change, a new
// page reads as zero as a faulted one does, and an older kernel's refusal
// (EINVAL) leaves the copy to fault the pages in as before.
func prefault(b []byte) {
	if len(b) < prefaultMin {
		return
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((pageBytes - addr%pageBytes) % pageBytes)
	hi := lo + (len(b)-lo)/pageBytes*pageBytes
	if hi <= lo {
		return
	}
	var vec [1]byte
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, addr+uintptr(lo), pageBytes, uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 || vec[0]&1 != 0 {
		return
	}
	_ = syscall.Madvise(b[lo:hi], madvPopulateWrite)
}
