package vector

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestModeProperty checks mode's lowest/highest tie rules against a
// brute-force count per group, fed directly and through partial state
// merged in two halves; and that the hash-order variant returns one of
// the most frequent values.
func TestModeProperty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 200; iter++ {
		n, ngroups := 1+r.IntN(200), 1+r.IntN(5)
		span := 1 + r.IntN(100)
		b := array.NewInt64Builder(mem)
		vals := make([]int64, n)
		valid := make([]bool, n)
		gids := make([]int32, n)
		for i := range vals {
			vals[i], valid[i], gids[i] = int64(r.IntN(span))-int64(span/2), r.IntN(6) > 0, int32(r.IntN(ngroups))
		}
		b.AppendValues(vals, valid)
		col := b.NewArray()
		counts := make([]map[int64]int, ngroups)
		for g := range counts {
			counts[g] = map[int64]int{}
		}
		for i := range vals {
			if valid[i] {
				counts[gids[i]][vals[i]]++
			}
		}
		for _, tie := range []int{-1, 0, 1} {
			direct, _ := bindMode(Int64, tie, false)
			direct.resize(ngroups)
			if err := direct.update(gids, []arrow.Array{col}); err != nil {
				t.Fatal(err)
			}
			// Two partial accumulators over the halves, merged.
			merged, _ := bindMode(Int64, tie, true)
			merged.resize(ngroups)
			for _, half := range [][2]int{{0, n / 2}, {n / 2, n}} {
				p, _ := bindMode(Int64, tie, false)
				p.resize(ngroups)
				part := array.NewSlice(col, int64(half[0]), int64(half[1]))
				if err := p.update(gids[half[0]:half[1]], []arrow.Array{part}); err != nil {
					t.Fatal(err)
				}
				part.Release()
				st, err := p.state(mem, 0, ngroups, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := merged.update(groupRange(0, ngroups), st); err != nil {
					t.Fatal(err)
				}
				releaseArrays(st)
			}
			for _, acc := range []*modeAcc{direct, merged} {
				out, err := acc.final(mem, 0, ngroups, nil)
				if err != nil {
					t.Fatal(err)
				}
				res := out.(*array.Int64)
				for g := 0; g < ngroups; g++ {
					best, bc := int64(0), 0
					for v, c := range counts[g] {
						if c > bc || c == bc && (tie < 0 && v < best || tie > 0 && v > best) {
							best, bc = v, c
						}
					}
					switch {
					case bc == 0:
						if res.IsValid(g) {
							t.Fatalf("iter %d group %d: got %d, want NULL", iter, g, res.Value(g))
						}
					case !res.IsValid(g):
						t.Fatalf("iter %d group %d: got NULL", iter, g)
					case tie == 0 && counts[g][res.Value(g)] != bc:
						t.Fatalf("iter %d group %d: %d is not most frequent", iter, g, res.Value(g))
					case tie != 0 && res.Value(g) != best:
						t.Fatalf("iter %d tie %d group %d: got %d, want %d", iter, tie, g, res.Value(g), best)
					}
				}
				out.Release()
			}
		}
		col.Release()
	}
}

// TestModeHashOrderTie checks the tie rule of mode(x) on integers without
// probe collisions: among tied counts, the value at the lowest
// OpenHashSet position (murmur3 of the value with seed 0, & 63; murmurInt
// is checked against Spark's hash() elsewhere) wins.
func TestModeHashOrderTie(t *testing.T) {
	pos := func(v int32) int { return int(murmurInt(v, 0)) & 63 }
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vals := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	want := vals[0]
	for _, v := range vals {
		if pos(v) < pos(want) {
			want = v
		}
	}
	b := array.NewInt32Builder(mem)
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	acc, _ := bindMode(arrow.PrimitiveTypes.Int32, 0, false)
	acc.resize(1)
	if err := acc.update(make([]int32, len(vals)), []arrow.Array{col}); err != nil {
		t.Fatal(err)
	}
	out, _ := acc.final(mem, 0, 1, nil)
	defer out.Release()
	if got := out.(*array.Int32).Value(0); got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}
