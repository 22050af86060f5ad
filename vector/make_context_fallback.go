//go:build !go1.23 || go1.28 || arrowstream_nolinkname

package vector

// runtimeAlloc reports that large arrays are made with make (see
// make_context.go): correct, but a cancel waits for make's zeroing.
const runtimeAlloc = false

// unzeroedSlice is zeroedSlice: without the runtime's allocator there is
// no unzeroed memory to be had.
func unzeroedSlice[T any](c int) []T { return zeroedSlice[T](c) }
