package vector

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// allocCounter counts the allocations made through it.
type allocCounter struct {
	memory.Allocator
	mu    sync.Mutex
	count int
}

func (a *allocCounter) Allocate(n int) []byte {
	a.mu.Lock()
	a.count++
	a.mu.Unlock()
	return a.Allocator.Allocate(n)
}

func (a *allocCounter) Reallocate(n int, b []byte) []byte {
	a.mu.Lock()
	a.count++
	a.mu.Unlock()
	return a.Allocator.Reallocate(n, b)
}

// slabTestStrings builds n strings of dt (string or binary): empty ones,
// short ones and some of tens of KB, nulls when nullable, sliced from a
// larger array when slice.
func slabTestStrings(mem memory.Allocator, rng *rand.Rand, dt arrow.DataType, n int, nullable, slice bool) arrow.Array {
	pad := 0
	if slice {
		pad = rng.Intn(5) + 1
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < n+2*pad; i++ {
		if nullable && rng.Intn(5) == 0 {
			b.AppendNull()
			continue
		}
		var s string
		switch rng.Intn(40) {
		case 0:
		case 1:
			s = strings.Repeat(string(rune('a'+rng.Intn(26))), 1000+rng.Intn(20000))
		default:
			s = fmt.Sprintf("v%0*d", rng.Intn(40), rng.Intn(1e6))
		}
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(s)
		case *array.BinaryBuilder:
			bb.Append([]byte(s))
		}
	}
	a := b.NewArray()
	if pad == 0 {
		return a
	}
	defer a.Release()
	return array.NewSlice(a, int64(pad), int64(pad+n))
}

// TestSlabGatherMatchesGather: columns gathered through a SlabAllocator
// sized by GatherChunksSlabBytes equal those gathered on the allocator
// itself (random pairs over one to 60 chunks, nulls, sliced chunks,
// empty and large strings, no rows); every buffer but string data comes
// from the one slab (one allocation of the underlying allocator, plus one
// per string column's data); the slab outlives every column but the last
// released (released in random order, each left one checked against its
// model on a poisoning allocator), and nothing leaks.
func TestSlabGatherMatchesGather(t *testing.T) {
	pm := poisonmem.NewChecked(t)
	rng := rand.New(rand.NewSource(24))
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary}
	for trial := 0; trial < 60; trial++ {
		nchunks := 1 + rng.Intn(6)
		if trial%5 == 0 {
			nchunks = 20 + rng.Intn(40)
		}
		ncols := 1 + rng.Intn(8)
		lens := make([]int, nchunks) // every column's chunks are of these lengths
		for k := range lens {
			lens[k] = 1 + rng.Intn(30)
		}
		cols := make([][]arrow.Array, ncols)
		strCols := 0
		for x := range cols {
			dt := types[rng.Intn(len(types))]
			nullable, slice := rng.Intn(2) == 0, rng.Intn(3) == 0
			cols[x] = make([]arrow.Array, nchunks)
			for k := range cols[x] {
				n := lens[k]
				if dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY {
					cols[x][k] = slabTestStrings(pm, rng, dt, n, nullable, slice)
				} else {
					cols[x][k] = gatherChunksTestArray(pm, rng, dt, n, nullable, slice)
				}
			}
			if dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY {
				strCols++
			}
		}
		// The pairs: the same sources and rows for every column (a join
		// side's), runs of one chunk among random rows.
		nrows := rng.Intn(3000)
		if trial%7 == 0 {
			nrows = 0
		}
		src, rows := make([]int32, 0, nrows), make([]int32, 0, nrows)
		for len(src) < nrows {
			k := rng.Intn(nchunks)
			n := cols[0][k].Len()
			r := rng.Intn(n)
			for run := 1 + rng.Intn(4); run > 0 && r < n && len(src) < nrows; run-- {
				src, rows = append(src, int32(k)), append(rows, int32(r))
				r++
			}
		}
		want := make([]arrow.Array, ncols)
		size := 0
		for x, chunks := range cols {
			a, err := GatherChunks(pm, chunks, src, rows)
			if err != nil {
				t.Fatal(err)
			}
			want[x] = a
			size += GatherChunksSlabBytes(chunks[0].DataType(), nrows)
		}
		under := &allocCounter{Allocator: pm}
		slab := NewSlabAllocator(under, size)
		got := make([]arrow.Array, ncols)
		for x, chunks := range cols {
			a, err := GatherChunks(slab, chunks, src, rows)
			if err != nil {
				t.Fatal(err)
			}
			got[x] = a
		}
		slab.Done()
		// The slab and each string column's data (none when its rows are
		// all empty or null).
		if max := 1 + strCols; under.count > max {
			t.Errorf("trial %d: %d allocations of the underlying allocator for %d columns (%d of strings), want at most %d",
				trial, under.count, ncols, strCols, max)
		}
		for _, chunks := range cols {
			releaseArrays(chunks)
		}
		order := rng.Perm(ncols)
		for i, x := range order {
			for _, y := range order[i:] {
				if !array.Equal(got[y], want[y]) {
					t.Fatalf("trial %d: column %d (%s) differs from its gather on the allocator after %d of %d columns released",
						trial, y, got[y].DataType(), i, ncols)
				}
			}
			got[x].Release()
		}
		releaseArrays(want)
	}
}

// TestSlabAllocatorReallocateAndFree: a slab buffer grown past its room
// moves (its bytes kept), one shrunk stays; requests beyond the slab go to
// the underlying allocator; buffers freed from several goroutines free the
// slab once, after the last of them and Done.
func TestSlabAllocatorReallocateAndFree(t *testing.T) {
	pm := poisonmem.NewChecked(t)
	a := NewSlabAllocator(pm, 1024)
	b := a.Allocate(100)
	for i := range b {
		b[i] = byte(i)
	}
	b = a.Reallocate(60, b)
	if len(b) != 60 || b[59] != 59 {
		t.Fatalf("shrunk buffer: %d bytes, last %d", len(b), b[len(b)-1])
	}
	b = a.Reallocate(300, b)
	if len(b) != 300 || b[59] != 59 || b[60] != 0 || !a.owns(b) {
		t.Fatalf("grown buffer: %d bytes, byte 59 %d, byte 60 %d, in the slab %v", len(b), b[59], b[60], a.owns(b))
	}
	big := a.Allocate(2048)
	if a.owns(big) {
		t.Fatal("a request larger than the slab was served from it")
	}
	var bufs [][]byte
	for len(bufs) < 8 {
		bufs = append(bufs, a.Allocate(64))
	}
	a.Free(big)
	a.Done()
	if pm.CurrentAlloc() < 1024 {
		t.Fatalf("the slab was freed with %d of its buffers out", len(bufs)+1)
	}
	var wg sync.WaitGroup
	for _, x := range append(bufs, b) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Free(x)
		}()
	}
	wg.Wait()
}
