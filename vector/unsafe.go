package vector

import "unsafe"

// castSlice reinterprets a byte buffer as a slice of fixed-width values.
// Arrow buffers are 64-byte aligned, so the cast is safe for the widths used.
func castSlice[T any](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) < size {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

func sizeOf[T any](v T) uintptr { return unsafe.Sizeof(v) }
