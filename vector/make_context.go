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

// Where the unzeroed memory comes from is chosen at build time:
// make_context_runtime.go links to the runtime's allocator (the default),
// make_context_fallback.go (build tag arrowstream_nolinkname) uses make.
//
// The decision (issue 17): keep the link. runtime.mallocgc is the
// project's only //go:linkname. The Go runtime marks it as linkable from
// outside ("hall of shame": widely used packages call it) with "Do not
// remove or change the type signature. See go.dev/issue/67401" (Go 1.23
// on; checked in Go 1.26's runtime/malloc.go), so the link is a promised
// interface, not an accident. What the fallback loses is not throughput
// (BenchmarkGrowInterruptible's doubling/fallback, make then a chunked
// copy, and doubling/context measured 4.1–8.9 s and 5.9–7.4 s per run at
// load 36–47: the same within that noise) but the bound on a cancel: make
// zeroes the whole array, faulting in pages the scavenger returned, in one
// call (4-5 ms per MB on the VMs measured: a 64 MB accumulator array held
// a cancel for a quarter of a second). The link is used on the Go releases
// whose runtime was checked (go1.23 to go1.27, the build constraint of
// make_context_runtime.go); any other release, or the tag, builds the
// fallback automatically, and TestMakeContextPathSelected fails on a
// release outside the checked range so that the signature is checked again
// and the range widened rather than the fallback shipping unnoticed. If a
// release ever drops the symbol, the link fails at build time naming
// runtime.mallocgc; building with -tags arrowstream_nolinkname is the way
// out until the range is narrowed.

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
	return makeContextWith(ctx, n, c, unzeroedSlice[T])
}

// makeContextWith is makeContext's large pointer-free case, with alloc
// returning c elements whose content need not be zero.
func makeContextWith[T any](ctx context.Context, n, c int, alloc func(c int) []T) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := alloc(c)
	if err := clearContextOf(ctx, t[n:]); err != nil {
		return nil, err
	}
	return t[:n], nil
}

// zeroedSlice is the fallback's allocation: make, which zeroes (and faults
// in) the whole array in one call.
func zeroedSlice[T any](c int) []T { return make([]T, c) }

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

// zeroedContext returns n zero elements, made as makeContext makes them: a
// large pointer-free array is zeroed (and so faulted in) a chunk at a time
// with ctx checked before each, where make would zero it all in one call.
// The window passes' partition-sized arrays are made with it.
func zeroedContext[T any](ctx context.Context, n int) ([]T, error) {
	s, err := makeContext[T](ctx, 0, n)
	if err != nil {
		return nil, err
	}
	return s[:n], nil
}
