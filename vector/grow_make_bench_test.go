package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkGrowInterruptible compares, in one run, the growth steps made
// interruptible with the steps they replaced:
//
//   - doubling/*: an accumulator's int64 array grown by doubling from 1K
//     to 8M groups, with make and copy (growZero) and with makeContext
//     and chunked copies (growZeroWith);
//
//   - string_keys/*: grouping 1M distinct 40-byte strings in batches of
//     64K, the bytes grouper's arena and offsets growing by append (group)
//     and interruptibly (groupContext, which also rehashes interruptibly).
//
//     go test -run '^$' -bench BenchmarkGrowInterruptible -count 5 ./vector
func BenchmarkGrowInterruptible(b *testing.B) {
	const groups = 8 << 20
	b.Run("doubling/make", func(b *testing.B) {
		b.SetBytes(groups * 8)
		for range b.N {
			var s []int64
			for n := 1024; n <= groups; n *= 2 {
				s = growZero(s, n)
			}
		}
	})
	b.Run("doubling/context", func(b *testing.B) {
		b.SetBytes(groups * 8)
		g := &grower{ctx: context.Background()}
		for range b.N {
			var s []int64
			for n := 1024; n <= groups; n *= 2 {
				s = growZeroWith(g, s, n)
			}
			if g.err != nil {
				b.Fatal(g.err)
			}
		}
	})
	b.Run("doubling/fallback", func(b *testing.B) {
		// The build without the runtime's allocator: make, then copy
		// (make_context_fallback.go).
		b.SetBytes(groups * 8)
		ctx := context.Background()
		for range b.N {
			var s []int64
			for n := 1024; n <= groups; n *= 2 {
				t, err := makeContextWith(ctx, len(s), n, zeroedSlice[int64])
				if err != nil {
					b.Fatal(err)
				}
				if err := copyContext(ctx, t, s); err != nil {
					b.Fatal(err)
				}
				s = t[:n]
			}
		}
	})
	mem := memory.NewGoAllocator()
	const keys, batch = 1 << 20, 64 << 10
	var batches []arrow.Array
	for lo := 0; lo < keys; lo += batch {
		batches = append(batches, stringKeys(mem, lo, batch))
	}
	defer releaseArrays(batches)
	gids := make([]int32, batch)
	for _, interruptible := range []bool{false, true} {
		name := "string_keys/append"
		if interruptible {
			name = "string_keys/context"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(keys * 40)
			for range b.N {
				g, err := newGrouper(mem, []arrow.DataType{arrow.BinaryTypes.String})
				if err != nil {
					b.Fatal(err)
				}
				for _, keys := range batches {
					in := []arrow.Array{keys}
					if interruptible {
						err = g.(contextGrouper).groupContext(context.Background(), in, gids)
					} else {
						err = g.group(in, gids)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				g.release()
			}
		})
	}
}
