//go:build unix

package harness

import (
	"os"
	"syscall"
)

var pageSize = os.Getpagesize()

func mapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmap fails only on a slice it did not map, which Free rules out.
func unmap(b []byte) { _ = syscall.Munmap(b) }
