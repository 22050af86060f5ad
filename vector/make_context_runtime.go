//go:build go1.23 && !go1.28 && !arrowstream_nolinkname

package vector

import "unsafe"

// runtimeAlloc reports that large pointer-free arrays come from the
// runtime's allocator unzeroed (see make_context.go for the decision).
const runtimeAlloc = true

// mallocgc is the Go runtime's allocator. With a nil type the memory is
// not scanned by the garbage collector (it may hold no pointers); with
// needzero false it may hold old bytes. The runtime keeps this entry point
// for packages that link to it and promises not to change its signature
// (go.dev/issue/67401).
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// unzeroedSlice returns c elements of a pointer-free type whose content is
// whatever the memory held: the caller zeroes or overwrites them.
func unzeroedSlice[T any](c int) []T {
	var zero T
	return unsafe.Slice((*T)(mallocgc(uintptr(c)*unsafe.Sizeof(zero), nil, false)), c)
}
