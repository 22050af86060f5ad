package vector

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// MemoryReserver is implemented by an allocator that enforces a memory
// limit (the server's per-query allocator). Arrow buffers are counted by
// the allocator itself; operators reserve through it the Go-heap memory
// of what they buffer (hash tables, key arenas, accumulators, sort
// permutations), so that the limit covers both. Reserve returns an error
// (and reserves nothing) when n more bytes would exceed the limit; a
// negative n returns bytes.
type MemoryReserver interface {
	Reserve(n int64) error
}

// OperatorLabeler is implemented by an accounting allocator that can
// attribute allocations to an operator, so that a limit error names the
// operator that hit it. The planner wraps each operator's allocator with
// it.
type OperatorLabeler interface {
	ForOperator(name string) memory.Allocator
}

// ForOperator returns mem labelled with the operator name when mem
// supports it (OperatorLabeler), else mem.
func ForOperator(mem memory.Allocator, name string) memory.Allocator {
	if l, ok := mem.(OperatorLabeler); ok {
		return l.ForOperator(name)
	}
	return mem
}

// heapAccount is what one operator holds reserved for its Go-heap
// structures. The zero value (and one over an allocator that is not a
// MemoryReserver) only counts.
type heapAccount struct {
	r    MemoryReserver
	what string // the operator, for errors
	held int64
}

func newHeapAccount(mem memory.Allocator, what string) heapAccount {
	r, _ := mem.(MemoryReserver)
	return heapAccount{r: r, what: what}
}

// set makes the reservation n bytes (growing or shrinking it). On error
// the reservation is unchanged.
func (a *heapAccount) set(n int64) error {
	delta := n - a.held
	if delta == 0 {
		return nil
	}
	if a.r != nil {
		if err := a.r.Reserve(delta); err != nil {
			return fmt.Errorf("%s: its hash tables and buffers would grow to %d bytes: %w", a.what, n, err)
		}
	}
	a.held = n
	return nil
}

// release returns everything reserved.
func (a *heapAccount) release() {
	if a.r != nil && a.held != 0 {
		_ = a.r.Reserve(-a.held)
	}
	a.held = 0
}

// sliceBytes is the heap size of a slice's backing array.
func sliceBytes[T any](s []T) int64 {
	var zero T
	return int64(cap(s)) * int64(unsafe.Sizeof(zero))
}

// cancelCheckRows is how many rows a long loop over a whole input (a hash
// join's build, a sort) handles between checks of its context, so that a
// cancelled query stops within a bounded amount of work.
const cancelCheckRows = 64 << 10
