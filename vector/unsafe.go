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

// reinterpret views a slice of one fixed-width type as another of the same
// size (arrow.Timestamp as int64, arrow.Date32 as int32).
func reinterpret[U, T any](s []T) []U {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
