//go:build linux || darwin || freebsd

package vector

import "syscall"

const canMap = true

// pageBytes is the smallest page size of the supported systems; touching
// every pageBytes bytes faults in every page.
const pageBytes = 4096

// sysMap maps size bytes of private anonymous (zeroed) memory.
func sysMap(size int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, errMap(size, err)
	}
	return b, nil
}

// sysUnmap returns a mapping from sysMap. munmap fails only on a range
// that is not page-aligned, which a whole mapping from sysMap never is.
func sysUnmap(b []byte) { _ = syscall.Munmap(b) }
