//go:build linux

package vector

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// TestAsyncUnmap: large buffers freed by a MappedAllocator, or dropped by
// a PoolAllocator (over its retention, or by Close), leave MappedBytes at
// once and are unmapped once WaitUnmapped returns (madvise on an unmapped
// range fails with ENOMEM); small ones are unmapped before Free returns.
func TestAsyncUnmap(t *testing.T) {
	if !canMap {
		t.Skip("no anonymous mappings here")
	}
	unmapped := func(b []byte) bool {
		return errors.Is(syscall.Madvise(b, syscall.MADV_NORMAL), syscall.ENOMEM)
	}
	touch := func(b []byte) {
		for i := 0; i < len(b); i += pageBytes {
			b[i] = 1
		}
	}
	m := NewMappedAllocatorAbove(1<<20, nil)
	small, large := m.Allocate(2<<20), m.Allocate(asyncUnmapBytes+1)
	touch(small)
	touch(large)
	smallMap, _ := m.mapping(small)
	largeMap, _ := m.mapping(large)
	m.Free(small)
	if !unmapped(smallMap) {
		t.Fatal("a 2 MiB buffer is still mapped after Free returned")
	}
	m.Free(large)
	if n := m.MappedBytes(); n != 0 {
		t.Fatalf("MappedBytes %d after every buffer was freed", n)
	}
	m.WaitUnmapped()
	if !unmapped(largeMap) {
		t.Fatal("a large buffer is still mapped after WaitUnmapped")
	}

	p := NewPoolAllocator(NewMappedAllocator(), 8<<20)
	ctx := context.Background()
	var bufs [][]byte
	for range 3 {
		b, err := p.TakeLarge(ctx, 6<<20)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		p.ReturnLarge(b) // the pool keeps one: 8 MiB retained at most
	}
	p.Close()
	p.WaitUnmapped()
	for i, b := range bufs {
		if !unmapped(b) {
			t.Fatalf("large buffer %d still mapped after the pool dropped it and WaitUnmapped", i)
		}
	}
}
