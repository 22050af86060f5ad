//go:build !linux

package hugeheap

const supported = false

func adviseHuge(addr, n uintptr) error { return ErrUnsupported }
