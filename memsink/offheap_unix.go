//go:build unix

package memsink

import (
	"os"
	"syscall"
)

var pageSize = os.Getpagesize()

func mapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmap(b []byte) {
	// Munmap fails only on a slice it did not map, which Free rules out.
	_ = syscall.Munmap(b)
}
