//go:build linux

package vector

import (
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestPoolPrefaultsFreshBuffers: a buffer the pool has none of to reuse
// comes from its allocator as fresh memory; the pool maps in the pages of
// the bytes asked for (the caller fills them: a window column of a
// query's first epoch, 36 traps of q7's first epoch), and leaves the
// size class's rest, which nobody may write, unmapped. A buffer under
// prefaultMin is left to fault. Without the pool's prefault no page of
// the fresh buffer is resident before it is written.
func TestPoolPrefaultsFreshBuffers(t *testing.T) {
	under := NewMappedAllocatorAbove(1, memory.NewGoAllocator()) // every buffer a fresh mapping
	p := NewPoolAllocator(under, 0)
	defer p.Close()

	const size = 40 << 10 // class 64 KiB: 10 pages asked for, 6 past them
	b := p.Allocate(size)
	whole := unsafe.Slice(unsafe.SliceData(b), sizeClass(size))
	for pg, ok := range resident(t, whole) {
		if want := pg < size/pageBytes; ok != want {
			t.Errorf("fresh %d-byte buffer: page %d of its %d-byte class resident %v, want %v", size, pg, len(whole), ok, want)
		}
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("byte %d of a fresh buffer is %d, want 0", i, v)
		}
	}
	p.Free(b)

	small := p.Allocate(8 << 10) // under prefaultMin: the copy's traps are cheaper than the calls
	for pg, ok := range resident(t, small) {
		if ok {
			t.Errorf("fresh 8 KiB buffer: page %d resident, want left to fault", pg)
		}
	}
	p.Free(small)
}

// TestPrefaultScratch: scratch just made has its pages mapped in when it
// is prefaultMin bytes or more, its contents unchanged; smaller scratch
// is left alone.
func TestPrefaultScratch(t *testing.T) {
	m, err := sysMap(32 * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(m)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(m))), len(m)/8)
	PrefaultScratch(words[:len(words)/2])
	for pg, ok := range resident(t, m) {
		if want := pg < 16; ok != want {
			t.Errorf("page %d resident %v, want %v", pg, ok, want)
		}
	}
	PrefaultScratch(words[len(words)-prefaultMin/8+1:]) // under prefaultMin
	if rs := resident(t, m); rs[len(rs)-1] {
		t.Errorf("scratch under prefaultMin bytes was mapped in")
	}
	for i, w := range words[:len(words)/2] { // (a read maps a page: after the checks)
		if w != 0 {
			t.Fatalf("word %d is %d after PrefaultScratch, want 0", i, w)
		}
	}
}

// TestGrowPrefaultsNewScratch: a slice grow makes anew has its n
// elements' pages mapped in before the caller writes them. The heap's
// free pages are given back first, so that the make lands in fresh
// memory as a query's first epoch does; without grow's prefault its pages
// are not resident.
func TestGrowPrefaultsNewScratch(t *testing.T) {
	debug.FreeOSMemory()
	const n = 1 << 19 // 4 MiB of uint64
	s := grow([]uint64(nil), n)
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n*8)
	// The whole pages inside the slice (its ends may share a page with
	// another object the heap placed there).
	start := uintptr(unsafe.Pointer(unsafe.SliceData(bytes)))
	skip := int((pageBytes - start%pageBytes) % pageBytes)
	inner := bytes[skip : skip+(len(bytes)-skip)/pageBytes*pageBytes]
	missing := 0
	for _, ok := range resident(t, inner) {
		if !ok {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("grow's new %d-byte slice: %d of its %d whole pages not resident", len(bytes), missing, len(inner)/pageBytes)
	}
	if len(s) != n || cap(s) < n+n/4 {
		t.Errorf("grow: len %d cap %d, want %d and at least %d", len(s), cap(s), n, n+n/4)
	}
}

// BenchmarkPoolFreshBuffer fills a buffer of a window column's size for
// 9,200 rows (Nexmark's bids an epoch) that the pool had none of, from
// fresh memory each time: through the pool (its prefault, then the
// fill), against the same fill of a fresh mapping trapping a page at a
// time, and a buffer the pool reuses (the steady epochs).
func BenchmarkPoolFreshBuffer(b *testing.B) {
	const size = 9200 * 8
	b.Run("pool_fresh", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			p := NewPoolAllocator(NewMappedAllocatorAbove(1, memory.NewGoAllocator()), 1)
			buf := p.Allocate(size)
			for i := range buf {
				buf[i] = byte(i)
			}
			p.Free(buf) // over the pool's 1-byte retention: unmapped
			p.Close()
		}
	})
	b.Run("mapping_traps", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			m, err := sysMap(sizeClass(size))
			if err != nil {
				b.Fatal(err)
			}
			buf := m[:size]
			for i := range buf {
				buf[i] = byte(i)
			}
			sysUnmap(m)
		}
	})
	b.Run("pool_reused", func(b *testing.B) {
		p := NewPoolAllocator(NewMappedAllocatorAbove(1, memory.NewGoAllocator()), 0)
		defer p.Close()
		p.Free(p.Allocate(size))
		b.SetBytes(size)
		for b.Loop() {
			buf := p.Allocate(size)
			for i := range buf {
				buf[i] = byte(i)
			}
			p.Free(buf)
		}
	})
}
