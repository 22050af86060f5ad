package vector

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestBigAllocSizes: small buffers are Go slices, large ones come from
// the allocator's cache; all come zeroed, bigFree and release return the
// cached ones, and a nil bigMem or one without a cache gives plain slices.
func TestBigAllocSizes(t *testing.T) {
	ctx := context.Background()
	pool := NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	m := newBigMem(pool)
	small, err := bigAlloc[int32](ctx, &m, 1000)
	if err != nil {
		t.Fatal(err)
	}
	large, err := bigAlloc[joinSlot](ctx, &m, bigAllocBytes/16+1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := bigAlloc[uint64](ctx, &m, 3*bigAllocBytes/8)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) != 1000 || len(large) != bigAllocBytes/16+1 || len(other) != 3*bigAllocBytes/8 {
		t.Fatalf("lengths %d %d %d", len(small), len(large), len(other))
	}
	if len(m.maps) != 2 {
		t.Fatalf("%d buffers from the cache, want 2 (the two large ones)", len(m.maps))
	}
	for i := range large {
		if large[i] != (joinSlot{}) {
			t.Fatalf("slot %d not zero", i)
		}
		large[i] = joinSlot{key: uint64(i), a: 1, n: 2}
	}
	for i := range other {
		if other[i] != 0 {
			t.Fatalf("word %d not zero", i)
		}
		other[i] = ^uint64(0)
	}
	bigFree(&m, large)
	bigFree(&m, small) // a Go slice: left to the collector
	if len(m.maps) != 1 {
		t.Fatalf("%d buffers held after freeing one, want 1", len(m.maps))
	}
	m.release()
	if len(m.maps) != 0 {
		t.Fatalf("%d buffers held after release", len(m.maps))
	}
	if canMap && pool.RetainedLarge() < 4*bigAllocBytes {
		t.Fatalf("the pool kept %d bytes of the returned buffers", pool.RetainedLarge())
	}
	var plainMem bigMem
	if s, err := bigAlloc[int64](ctx, &plainMem, bigAllocBytes); err != nil || len(s) != bigAllocBytes || len(plainMem.maps) != 0 {
		t.Fatalf("no cache: %d, %v, %d held", len(s), err, len(plainMem.maps))
	}
	plain, err := bigAlloc[int64](ctx, nil, bigAllocBytes)
	if err != nil || len(plain) != bigAllocBytes {
		t.Fatalf("nil bigMem: %d, %v", len(plain), err)
	}
	bigFree[int64](nil, plain)
}

// TestBigAllocCancelled: a cancelled context fails every large
// allocation and leaves nothing mapped or taken from a pool.
func TestBigAllocCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pool := NewPoolAllocator(memory.NewGoAllocator(), 0)
	defer pool.Close()
	for _, m := range []*bigMem{{}, {cache: pool}} {
		if _, err := bigAlloc[uint64](ctx, m, bigAllocBytes); !errors.Is(err, context.Canceled) {
			t.Fatalf("bigAlloc on a cancelled context: %v", err)
		}
		if len(m.maps) != 0 {
			t.Fatalf("%d buffers held after a cancelled bigAlloc", len(m.maps))
		}
	}
	if _, err := pool.AllocateContext(ctx, 4*bigAllocBytes); !errors.Is(err, context.Canceled) {
		t.Fatalf("AllocateContext on a cancelled context: %v", err)
	}
	mapped := NewMappedAllocator()
	if _, err := mapped.AllocateContext(ctx, 4*bigAllocBytes); !errors.Is(err, context.Canceled) {
		t.Fatalf("MappedAllocator.AllocateContext on a cancelled context: %v", err)
	}
	if n := mapped.MappedBytes(); n != 0 {
		t.Fatalf("%d bytes mapped after a cancelled allocation", n)
	}
}

// TestPoolLargeReuse: a returned large buffer is handed out again, zeroed,
// for a request of up to its size (and at least half of it); retention is
// bounded by the pool's limit, evicting the largest; Close unmaps all.
func TestPoolLargeReuse(t *testing.T) {
	if !canMap {
		t.Skip("no mappings on this system")
	}
	ctx := context.Background()
	pool := NewPoolAllocator(memory.NewGoAllocator(), 8*bigAllocBytes)
	defer pool.Close()
	a, err := pool.TakeLarge(ctx, 3*bigAllocBytes+5)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 4*bigAllocBytes {
		t.Fatalf("a new large buffer is %d bytes, want whole megabytes (%d)", len(a), 4*bigAllocBytes)
	}
	for i := range a {
		a[i] = 0xff
	}
	pool.ReturnLarge(a)
	if pool.RetainedLarge() != len(a) {
		t.Fatalf("retained %d, want %d", pool.RetainedLarge(), len(a))
	}
	b, err := pool.TakeLarge(ctx, 3*bigAllocBytes)
	if err != nil {
		t.Fatal(err)
	}
	if &b[0] != &a[0] {
		t.Fatal("a fitting retained buffer was not reused")
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	if pool.RetainedLarge() != 0 {
		t.Fatalf("retained %d while the buffer is out", pool.RetainedLarge())
	}
	// Too large a buffer for a small request is not handed out.
	pool.ReturnLarge(b)
	c, err := pool.TakeLarge(ctx, bigAllocBytes)
	if err != nil {
		t.Fatal(err)
	}
	if &c[0] == &b[0] {
		t.Fatal("a 4 MB buffer was handed out for 1 MB")
	}
	// Retention limit (8 MB): returning 1 MB and then 6 MB evicts the
	// 4 MB one.
	pool.ReturnLarge(c)
	d, err := pool.TakeLarge(ctx, 6*bigAllocBytes)
	if err != nil {
		t.Fatal(err)
	}
	pool.ReturnLarge(d)
	if got := pool.RetainedLarge(); got != 7*bigAllocBytes {
		t.Fatalf("retained %d bytes, want %d (1 MB and 6 MB)", got, 7*bigAllocBytes)
	}
	pool.Close()
	if pool.RetainedLarge() != 0 {
		t.Fatal("Close kept large buffers")
	}
}

// TestPoolAllocateContextReuse: AllocateContext reuses a freed buffer of
// the size class, zeroed, and counts like Allocate.
func TestPoolAllocateContextReuse(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(NewMappedAllocator())
	defer mem.AssertSize(t, 0)
	pool := NewPoolAllocator(mem, 0)
	defer pool.Close()
	a, err := pool.AllocateContext(ctx, 3*bigAllocBytes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		a[i] = 7
	}
	pool.Free(a)
	b, err := pool.AllocateContext(ctx, 3*bigAllocBytes+100)
	if err != nil {
		t.Fatal(err)
	}
	if &b[0] != &a[0] || len(b) != 3*bigAllocBytes+100 {
		t.Fatal("the freed buffer of the class was not reused")
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	pool.Free(b)
}

// TestMappedAllocator: large buffers are mapped and unmapped on Free,
// small ones are Go slices; Reallocate keeps the contents across the
// boundary.
func TestMappedAllocator(t *testing.T) {
	if !canMap {
		t.Skip("no mappings on this system")
	}
	a := NewMappedAllocator()
	small := a.Allocate(100)
	if a.MappedBytes() != 0 {
		t.Fatal("a small buffer was mapped")
	}
	for i := range small {
		small[i] = byte(i)
	}
	big := a.Reallocate(2*bigAllocBytes, small)
	if a.MappedBytes() != 2*bigAllocBytes {
		t.Fatalf("mapped %d after growing past a megabyte", a.MappedBytes())
	}
	for i := range 100 {
		if big[i] != byte(i) {
			t.Fatalf("byte %d lost in Reallocate", i)
		}
	}
	for i := 100; i < len(big); i += 4096 {
		if big[i] != 0 {
			t.Fatalf("byte %d of the grown buffer not zero", i)
		}
	}
	bigger := a.Reallocate(3*bigAllocBytes, big)
	if a.MappedBytes() != 3*bigAllocBytes || bigger[99] != 99 {
		t.Fatalf("mapped %d after growing again", a.MappedBytes())
	}
	a.Free(bigger)
	if a.MappedBytes() != 0 {
		t.Fatalf("mapped %d after Free", a.MappedBytes())
	}
}
