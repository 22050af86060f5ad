package hugeheap

import "syscall"

const supported = true

// madvHugepage is MADV_HUGEPAGE, the same on every Linux architecture.
const madvHugepage = 14

// adviseHuge marks [addr, addr+n) MADV_HUGEPAGE.
func adviseHuge(addr, n uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, n, madvHugepage); e != 0 {
		return e
	}
	return nil
}
