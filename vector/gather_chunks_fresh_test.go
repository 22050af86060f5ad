//go:build linux

package vector

import (
	"math/rand"
	"strings"
	"testing"

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
	for _, c := range []struct {
		name string
		mem  memory.Allocator
	}{{"fresh", freshAllocator{}}, {"warm", pool}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(out) * 400)
			for b.Loop() {
				a, err := GatherChunks(c.mem, chunks, src, rows)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
	}
}
