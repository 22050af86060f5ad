//go:build linux

package vector

import (
	"encoding/binary"
	"math/rand"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// freshAllocator maps every buffer fresh and unmaps it when freed: the
// memory a kept output (a memory sink's records) gets, whose pages the
// process has never touched.
type freshAllocator struct{}

func (freshAllocator) Allocate(size int) []byte {
	if size == 0 {
		return nil
	}
	b, err := sysMap((size + pageBytes - 1) / pageBytes * pageBytes)
	if err != nil {
		panic(err)
	}
	return b[:size]
}

func (a freshAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (freshAllocator) Free(b []byte) {
	if cap(b) > 0 {
		sysUnmap(b[:cap(b)])
	}
}

// BenchmarkGatherChunksFresh: a q20-like join output's string column
// (8,192 rows of 100–700 bytes gathered from 64 chunks of 512 rows, about
// 3.2 MB) into fresh pages (fresh) and into a pool's already touched
// buffers (warm: what prefault costs when it has nothing to do).
//
//	go test -run '^$' -bench GatherChunksFresh ./vector/
func BenchmarkGatherChunksFresh(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	const nChunks, per, out = 64, 512, 8192
	chunks := make([]arrow.Array, nChunks)
	for k := range chunks {
		sb := array.NewStringBuilder(mem)
		for range per {
			sb.Append(strings.Repeat("x", 100+rng.Intn(600)))
		}
		chunks[k] = sb.NewArray()
		sb.Release()
	}
	defer releaseArrays(chunks)
	src, rows := make([]int32, out), make([]int32, out)
	for o := range src {
		src[o], rows[o] = int32(rng.Intn(nChunks)), int32(rng.Intn(per))
	}
	pool := NewPoolAllocator(mem, 0)
	defer pool.Close()
	// one-chunk: the same rows from a single chunk of all 64 (a join side
	// whose matches are in one stored batch).
	one, err := Concatenate(chunks, mem)
	if err != nil {
		b.Fatal(err)
	}
	defer one.Release()
	oneSrc, oneRows := make([]int32, out), make([]int32, out)
	for o := range oneRows {
		oneRows[o] = src[o]*per + rows[o]
	}
	for _, c := range []struct {
		name      string
		mem       memory.Allocator
		chunks    []arrow.Array
		src, rows []int32
	}{{"fresh", freshAllocator{}, chunks, src, rows}, {"warm", pool, chunks, src, rows},
		{"fresh-one-chunk", freshAllocator{}, []arrow.Array{one}, oneSrc, oneRows}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(out) * 400)
			for b.Loop() {
				a, err := GatherChunks(c.mem, c.chunks, c.src, c.rows)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
	}
}

// threadFaults counts the page faults the calling thread takes (it holds
// its thread: runtime.LockOSThread) through perf's software counter,
// which counts the faults a thread's accesses trap into, not the pages
// MADV_POPULATE_WRITE maps in (the thread's minflt counts both). ok is
// false where the counter cannot be opened (perf_event_paranoid, a
// sandbox).
type threadFaults struct{ fd int }

func openThreadFaults() (threadFaults, bool) {
	// struct perf_event_attr, PERF_ATTR_SIZE_VER0: type, size, config
	// (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS), then the sample
	// fields and the flags, left zero (counting, enabled).
	var attr [64]byte
	binary.LittleEndian.PutUint32(attr[0:], 1)
	binary.LittleEndian.PutUint32(attr[4:], uint32(len(attr)))
	binary.LittleEndian.PutUint64(attr[8:], 2)
	cpu := -1
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr[0])), 0, uintptr(cpu), ^uintptr(0), 0, 0)
	if errno != 0 {
		return threadFaults{}, false
	}
	return threadFaults{int(fd)}, true
}

func (f threadFaults) read(t *testing.T) int64 {
	t.Helper()
	var b [8]byte
	if _, err := syscall.Read(f.fd, b[:]); err != nil {
		t.Fatalf("read the page-fault counter: %v", err)
	}
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// TestGatherChunksOneChunkPrefaults: a string column gathered from a
// single chunk into fresh memory (a join's output from one stored batch,
// which the sink keeps) has its pages mapped in at once, as one gathered
// from several chunks has: the gather takes a handful of page faults, not
// one per page of its strings (the single chunk went to Take, which
// faulted each page in as the copy reached it).
func TestGatherChunksOneChunkPrefaults(t *testing.T) {
	if !prefaultWorks(t) {
		t.Skip("this kernel refuses MADV_POPULATE_WRITE")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(2))
	sb := array.NewStringBuilder(mem)
	for range 4000 {
		sb.Append(strings.Repeat("y", 100+rng.Intn(600)))
	}
	chunk := sb.NewArray()
	sb.Release()
	defer chunk.Release()
	src, rows := make([]int32, 3000), make([]int32, 3000)
	for o := range rows {
		rows[o] = int32(rng.Intn(chunk.Len()))
	}
	want, err := Take(mem, chunk, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	pages := int64(len(want.Data().Buffers()[2].Bytes()) / pageBytes)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	counter, ok := openThreadFaults()
	if !ok {
		t.Skip("no perf page-fault counter here")
	}
	defer syscall.Close(counter.fd)
	before := counter.read(t)
	got, err := GatherChunks(freshAllocator{}, []arrow.Array{chunk}, src, rows)
	faults := counter.read(t) - before
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.Equal(got, want) {
		t.Fatalf("gathered strings differ from Take's")
	}
	if faults > pages/8 {
		t.Fatalf("gathering %d pages of strings into fresh memory took %d page faults, want at most %d", pages, faults, pages/8)
	}
}

// prefaultWorks reports whether the kernel takes MADV_POPULATE_WRITE.
func prefaultWorks(t *testing.T) bool {
	t.Helper()
	b, err := sysMap(4 * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(b)
	return syscall.Madvise(b, madvPopulateWrite) == nil
}
