package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestMappedAllocatorAbove: buffers from the threshold up are mapped
// (zeroed, grown in place within their pages, contents kept when they
// move), smaller ones come from the heap allocator given, and every
// mapping is gone once freed.
func TestMappedAllocatorAbove(t *testing.T) {
	if !canMap {
		t.Skip("no anonymous mappings on this system")
	}
	const min = 64 << 10
	heap := memory.NewCheckedAllocator(memory.NewGoAllocator())
	a := NewMappedAllocatorAbove(min, heap)
	small := a.Allocate(100)
	if a.MappedBytes() != 0 || heap.CurrentAlloc() != 100 {
		t.Fatalf("small buffer: mapped %d, heap %d", a.MappedBytes(), heap.CurrentAlloc())
	}
	big := a.Allocate(min + 1)
	if a.MappedBytes() < min+1 || len(big) != min+1 {
		t.Fatalf("big buffer: mapped %d, len %d", a.MappedBytes(), len(big))
	}
	for i := range big {
		if big[i] != 0 {
			t.Fatalf("byte %d not zeroed", i)
		}
		big[i] = byte(i)
	}
	same := a.Reallocate(min+2, big) // within the mapping's last page
	if &same[0] != &big[0] || same[min+1] != 0 {
		t.Fatal("growth within the mapping moved or left garbage")
	}
	moved := a.Reallocate(4*min, same)
	for i := range min + 1 {
		if moved[i] != byte(i) {
			t.Fatalf("byte %d lost when the buffer moved", i)
		}
	}
	grown := a.Reallocate(2*min, small) // small → mapped
	a.Free(moved)
	a.Free(grown)
	if a.MappedBytes() != 0 || heap.CurrentAlloc() != 0 {
		t.Fatalf("after freeing: mapped %d, heap %d", a.MappedBytes(), heap.CurrentAlloc())
	}
}
