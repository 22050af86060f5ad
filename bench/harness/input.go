package harness

import (
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// InputAllocator returns an allocator for a workload's generated input:
// buffers of 64 KiB and more are anonymous memory mappings outside the Go
// heap (on Unix), returned to the OS when freed. Input held through a run
// then neither raises the garbage collector's heap goal nor hides inside
// the Go heap's figures; it is resident from generation on, so it is part
// of MemoryMeter's baseline. Smaller buffers, and every buffer where
// mapping fails or is not available, come from Go's allocator.
//
// As with any allocator outside the Go heap, a value taken from a buffer
// without copying it (a Go string over its bytes) must not outlive the
// record: it would fault instead of keeping the buffer alive.
func InputAllocator() memory.Allocator {
	return vector.NewMappedAllocatorAbove(minInputMapped, memory.NewGoAllocator())
}

// minInputMapped is the smallest buffer worth a mapping (16 pages).
const minInputMapped = 64 << 10
