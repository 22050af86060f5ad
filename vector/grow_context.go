package vector

import (
	"context"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
)

// Interruptible growth of the per-group arrays of groupers and
// accumulators.
//
// A grouper's or accumulator's arrays are indexed by group id and grow by
// doubling: the step that doubles an array of millions of groups copies
// it whole, tens or hundreds of milliseconds on a loaded machine (the
// first touch of each new page included), during which a cancelled query
// could not stop. The helpers here copy growChunkBytes at a time and check
// the context between; a cancelled growth leaves the array as it was.
//
// The new array itself comes from makeContext, which zeroes a large
// pointer-free array in chunks with the same checks (make would zero it,
// and fault its pages in, in one call); the groupers' slot tables, the
// largest arrays, come from the allocator's large-buffer cache (bigAlloc).

// growChunkBytes is how many bytes an interruptible growth copies between
// two context checks (about 0.1 ms of copying when the pages are
// resident, about 1 ms when they must be faulted in).
const growChunkBytes = 256 << 10

// growStep is how many elements of T make growChunkBytes.
func growStep[T any]() int {
	var zero T
	return max(1, growChunkBytes/max(1, int(unsafe.Sizeof(zero))))
}

// copyContext copies src into dst (len(dst) >= len(src)) growChunkBytes
// at a time, checking ctx before each chunk.
func copyContext[T any](ctx context.Context, dst, src []T) error {
	step := growStep[T]()
	for lo := 0; lo < len(src); lo += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		copy(dst[lo:], src[lo:min(lo+step, len(src))])
	}
	return nil
}

// growCapContext returns s with room for need elements (a copy with at
// least twice the capacity when s has less, groupGrownCap), copying interruptibly; on
// cancellation it returns s unchanged and ctx's error.
func growCapContext[T any](ctx context.Context, s []T, need int) ([]T, error) {
	if cap(s) >= need {
		return s, nil
	}
	t, err := makeContext[T](ctx, len(s), groupGrownCap[T](cap(s), need))
	if err != nil {
		return s, err
	}
	if err := copyContext(ctx, t, s); err != nil {
		return s, err
	}
	return t, nil
}

// grower carries the context of one interruptible resize through an
// accumulator's arrays: the first growth that is cancelled records err,
// and every later one leaves its array alone, so that a cancelled resize
// returns quickly (the accumulator is then unusable: its query has
// failed).
type grower struct {
	ctx context.Context
	err error
}

// growZeroWith is growZero, interruptible when g is set (nil: as growZero).
func growZeroWith[T any](g *grower, s []T, n int) []T {
	if g == nil || g.ctx == nil {
		return growZero(s, n)
	}
	if g.err != nil || n <= len(s) {
		return s
	}
	if n <= cap(s) {
		// The new elements are at most one batch's new groups.
		t := s[:n]
		clear(t[len(s):])
		return t
	}
	t, err := growCapContext(g.ctx, s, n)
	if err != nil {
		g.err = err
		return s
	}
	return t[:n] // growCapContext zeroed everything past len(s)
}

// growFillWith is growFill, interruptible when g is set.
func growFillWith[T any](g *grower, s []T, n int, v T) []T {
	old := len(s)
	s = growZeroWith(g, s, n)
	if g == nil || g.ctx == nil {
		for i := old; i < len(s); i++ {
			s[i] = v
		}
		return s
	}
	if g.err == nil {
		g.err = fillContextOf(g.ctx, s[old:], v)
	}
	return s
}

// growerAcc is an accumulator whose arrays can grow interruptibly: grow is
// resize with g (nil: not interruptible). Accumulators without it resize
// in one step.
type growerAcc interface {
	grow(g *grower, n int)
}

// resizeContext resizes acc for n groups, interruptibly when it can grow
// so; it returns ctx's error when the growth was cancelled (acc must not
// be used then).
func resizeContext(ctx context.Context, acc accumulator, n int) error {
	ga, ok := acc.(growerAcc)
	if !ok {
		acc.resize(n)
		return ctx.Err()
	}
	g := &grower{ctx: ctx}
	ga.grow(g, n)
	return g.err
}

// groupContextOf groups keys with an interruptible table growth when the
// grouper can grow so.
func groupContextOf(ctx context.Context, gr grouper, keys []arrow.Array, gids []int32) error {
	if cg, ok := gr.(contextGrouper); ok {
		return cg.groupContext(ctx, keys, gids)
	}
	return gr.group(keys, gids)
}
