package vector

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// gatherChunksTestArray builds n random values of dt (nulls when
// nullable), sliced from a larger array when slice.
func gatherChunksTestArray(mem memory.Allocator, rng *rand.Rand, dt arrow.DataType, n int, nullable, slice bool) arrow.Array {
	pad := 0
	if slice {
		pad = rng.Intn(9) + 1
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < n+2*pad; i++ {
		if nullable && rng.Intn(4) == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(rng.Int63())
		case *array.Int32Builder:
			bb.Append(rng.Int31())
		case *array.Float64Builder:
			bb.Append(rng.NormFloat64())
		case *array.BooleanBuilder:
			bb.Append(rng.Intn(2) == 0)
		case *array.StringBuilder:
			bb.Append(fmt.Sprintf("s%0*d", rng.Intn(30), rng.Intn(1000)))
		case *array.BinaryBuilder:
			bb.Append([]byte(fmt.Sprintf("b%d", rng.Intn(1e6))))
		case *array.ListBuilder:
			bb.Append(true)
			vb := bb.ValueBuilder().(*array.Int64Builder)
			for k := rng.Intn(3); k > 0; k-- {
				vb.Append(rng.Int63n(100))
			}
		default:
			panic(fmt.Sprintf("no values for %T", b))
		}
	}
	a := b.NewArray()
	if pad == 0 {
		return a
	}
	defer a.Release()
	return array.NewSlice(a, int64(pad), int64(pad+n))
}

// TestGatherChunksMatchesConcatTake: GatherChunks equals the brute-force
// model (concatenate the chunks, Take the rows' global positions) for
// every kernel's types and the fallback (lists), with sliced and empty
// chunks, with and without nulls; nothing leaks.
func TestGatherChunksMatchesConcatTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(3))
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.ListOf(arrow.PrimitiveTypes.Int64)}
	for _, dt := range types {
		for trial := 0; trial < 30; trial++ {
			nullable, slice := trial%2 == 0, trial%3 == 0
			chunks := make([]arrow.Array, 1+rng.Intn(6))
			base := make([]int32, len(chunks)+1)
			for k := range chunks {
				n := rng.Intn(40)
				if rng.Intn(5) == 0 {
					n = 0
				}
				chunks[k] = gatherChunksTestArray(mem, rng, dt, n, nullable, slice)
				base[k+1] = base[k] + int32(n)
			}
			var src, rows, global []int32
			if base[len(chunks)] > 0 {
				for o := rng.Intn(100); o > 0; o-- {
					k := rng.Intn(len(chunks))
					if chunks[k].Len() == 0 {
						continue
					}
					r := int32(rng.Intn(chunks[k].Len()))
					src, rows, global = append(src, int32(k)), append(rows, r), append(global, base[k]+r)
				}
			}
			got, err := GatherChunks(mem, chunks, src, rows)
			if err != nil {
				t.Fatalf("%s: %v", dt, err)
			}
			cat, err := Concatenate(chunks, mem)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Take(mem, cat, global)
			if err != nil {
				t.Fatal(err)
			}
			if !array.Equal(got, want) {
				t.Errorf("%s trial %d: got %v, want %v", dt, trial, got, want)
			}
			got.Release()
			want.Release()
			cat.Release()
			releaseArrays(chunks)
		}
	}
}

// TestGatherChunksRefusesBadInput: mismatched lengths, no chunks and
// chunks of different types are errors, not panics.
func TestGatherChunksRefusesBadInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(1))
	a := gatherChunksTestArray(mem, rng, arrow.PrimitiveTypes.Int64, 3, false, false)
	defer a.Release()
	s := gatherChunksTestArray(mem, rng, arrow.BinaryTypes.String, 3, false, false)
	defer s.Release()
	for name, call := range map[string]func() (arrow.Array, error){
		"lengths":   func() (arrow.Array, error) { return GatherChunks(mem, []arrow.Array{a}, []int32{0}, nil) },
		"no chunks": func() (arrow.Array, error) { return GatherChunks(mem, nil, nil, nil) },
		"types":     func() (arrow.Array, error) { return GatherChunks(mem, []arrow.Array{a, s}, []int32{0}, []int32{0}) },
	} {
		if out, err := call(); err == nil {
			out.Release()
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkGatherChunks: gathering 2,000 rows of an int64 and a string
// column spread over 200 chunks of 50 rows, as one GatherChunks per
// column (chunks) against one Take per chunk and a concatenation (perChunk,
// what a join did per stored batch), in the same run.
//
//	go test -run XXX -bench GatherChunks ./vector/
func BenchmarkGatherChunks(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	const nChunks, per, out = 200, 50, 2000
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String} {
		chunks := make([]arrow.Array, nChunks)
		for k := range chunks {
			chunks[k] = gatherChunksTestArray(mem, rng, dt, per, true, false)
		}
		src, rows := make([]int32, out), make([]int32, out)
		sel := make([][]int32, nChunks)
		for o := range src {
			src[o], rows[o] = int32(o*nChunks/out), int32(rng.Intn(per))
			sel[src[o]] = append(sel[src[o]], rows[o])
		}
		b.Run(fmt.Sprintf("%s/chunks", dt), func(b *testing.B) {
			for b.Loop() {
				a, err := GatherChunks(mem, chunks, src, rows)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		})
		b.Run(fmt.Sprintf("%s/perChunk", dt), func(b *testing.B) {
			for b.Loop() {
				parts := make([]arrow.Array, 0, nChunks)
				for k, c := range chunks {
					p, err := Take(mem, c, sel[k])
					if err != nil {
						b.Fatal(err)
					}
					parts = append(parts, p)
				}
				a, err := Concatenate(parts, mem)
				if err != nil {
					b.Fatal(err)
				}
				releaseArrays(parts)
				a.Release()
			}
		})
		releaseArrays(chunks)
	}
}
