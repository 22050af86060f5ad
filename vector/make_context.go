package vector

import (
	"context"
	"reflect"
	"unsafe"
)

// Interruptible make of a large pointer-free slice.
//
// make zeroes the whole new array in one runtime call that cannot look at
// a context, and when the runtime reuses memory its scavenger had given
// back to the OS that call also faults every page in: on the VMs this
// engine runs on, 4–5 ms per MB, so growing an accumulator's 64 MB array
// held a cancelled query for a quarter of a second before the first
// check. makeContext takes the memory from the runtime unzeroed (the
// runtime's own path for append's growth, which zeroes only what it does
// not copy over) and zeroes it growChunkBytes at a time with a context
// check before each chunk, so a cancel waits for one chunk.

// mallocgc is the Go runtime's allocator. With a nil type the memory is
// not scanned by the garbage collector (it may hold no pointers); with
// needzero false it may hold old bytes. The runtime keeps this entry point
// for packages that link to it (its signature is promised not to change).
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// makeContext returns a slice of length n and capacity c (n <= c) whose
// elements [n, c) are zero and whose elements [0, n) the caller
// overwrites (copyContext) before reading them. A pointer-free slice of
// at least bigAllocBytes is zeroed growChunkBytes at a time with ctx
// checked before each chunk; on cancellation it returns ctx's error and
// the memory is left to the garbage collector. Smaller slices, and slices
// whose elements hold pointers (the collector must never see stale
// pointers), are made with make after one check.
func makeContext[T any](ctx context.Context, n, c int) ([]T, error) {
	var zero T
	size := uintptr(c) * unsafe.Sizeof(zero)
	if size < bigAllocBytes || !pointerFree(reflect.TypeFor[T]()) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return make([]T, n, c), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := unsafe.Slice((*T)(mallocgc(size, nil, false)), c)
	if err := clearContextOf(ctx, t[n:]); err != nil {
		return nil, err
	}
	return t[:n], nil
}

// clearContextOf zeroes s growChunkBytes at a time, checking ctx before
// each chunk.
func clearContextOf[T any](ctx context.Context, s []T) error {
	step := growStep[T]()
	for lo := 0; lo < len(s); lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		clear(s[lo:min(lo+step, len(s))])
	}
	return nil
}

// fillContextOf sets every element of s to v growChunkBytes at a time,
// checking ctx before each chunk.
func fillContextOf[T any](ctx context.Context, s []T, v T) error {
	step := growStep[T]()
	for lo := 0; lo < len(s); lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := lo; i < min(lo+step, len(s)); i++ {
			s[i] = v
		}
	}
	return nil
}

// pointerFree reports whether values of t hold no pointers, so that
// memory for them may be allocated unscanned. It is called once per
// growth of an array (not per row): the reflection costs nothing next to
// the megabytes the growth moves.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
