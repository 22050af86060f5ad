//go:build linux

package vector_test

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU reads the CPU clock of thread tid of this process: the time it
// has run, which unlike the wall clock does not grow while the thread waits
// for a core on a loaded machine. ok is false where the clock cannot be
// read.
func threadCPU(tid int) (d time.Duration, ok bool) {
	if tid <= 0 {
		return 0, false
	}
	// Linux's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid,
	// CPUCLOCK_SCHED)): any thread of the process may read it.
	clock := uintptr(^tid<<3 | 6)
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// currentTid is the id of the calling OS thread.
func currentTid() int { return syscall.Gettid() }
