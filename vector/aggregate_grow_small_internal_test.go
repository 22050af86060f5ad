package vector

import (
	"context"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestSmallStateGrowsFourfold: per-group arrays and the words grouper's
// table grow fourfold while small (smallGrowBytes), so that state grown
// from nothing over many epochs (q17: 6 K groups a partition, a few
// hundred new ones an epoch) is copied into fresh memory a third as
// often; past the bound they double. The grouper, grown so through random
// batches of old and new keys, gives every row the group a map model
// gives it (numbered by first appearance), with and without a context;
// the arrays keep their values and zero their new elements.
func TestSmallStateGrowsFourfold(t *testing.T) {
	// The arrays: 20 epochs of 300 new groups each.
	for _, withCtx := range []bool{false, true} {
		var s []int64
		moves := 0
		for e := 1; e <= 20; e++ {
			old := unsafe.SliceData(s)
			had := len(s)
			if withCtx {
				s = growZeroWith(&grower{ctx: context.Background()}, s, 300*e)
			} else {
				s = growZero(s, 300*e)
			}
			if had > 0 && unsafe.SliceData(s) != old {
				moves++
			}
			for i := range s {
				if i < had && s[i] != int64(i)+1 || i >= had && s[i] != 0 {
					t.Fatalf("ctx %v epoch %d: element %d is %d after growth", withCtx, e, i, s[i])
				}
				s[i] = int64(i) + 1
			}
		}
		// 300 → 1200 → 4800 → 19200: three moves (doubling: five).
		if moves > 3 {
			t.Fatalf("ctx %v: 6000 groups in steps of 300 moved the array %d times, want at most 3", withCtx, moves)
		}
	}
	if got := groupGrownCap[int64](1<<17, 1<<17+1); got != 1<<18 {
		t.Fatalf("an array of 1 MB grows to %d elements, want twice (%d)", got, 1<<18)
	}
	if got := groupGrownCap[int64](1<<10, 1<<10+1); got != 1<<12 {
		t.Fatalf("an array of 8 KB grows to %d elements, want four times (%d)", got, 1<<12)
	}

	// The grouper: GROUP BY bigint, int over 200 batches, each a mix of
	// earlier keys and about 30 new ones (small, so that the table grows
	// at most once a batch).
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32}
	for _, withCtx := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 11))
		g := newWordsGrouper(types)
		model := map[[2]int64]int32{}
		var keys [][2]int64
		growths, slots := 0, g.numSlots()
		for e := range 200 {
			a := array.NewInt64Builder(mem)
			b := array.NewInt32Builder(mem)
			var rows [][2]int64
			for range 100 {
				var k [2]int64
				if len(keys) > 0 && rng.IntN(10) < 7 {
					k = keys[rng.IntN(len(keys))]
				} else {
					k = [2]int64{int64(rng.Uint64()), int64(int32(rng.IntN(3)))}
				}
				rows = append(rows, k)
				a.Append(k[0])
				b.Append(int32(k[1]))
			}
			cols := []arrow.Array{a.NewArray(), b.NewArray()}
			a.Release()
			b.Release()
			gids := make([]int32, len(rows))
			var err error
			if withCtx {
				err = g.groupContext(context.Background(), cols, gids)
			} else {
				err = g.group(cols, gids)
			}
			for _, c := range cols {
				c.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range rows {
				want, ok := model[k]
				if !ok {
					want = int32(len(model))
					model[k] = want
					keys = append(keys, k)
				}
				if gids[i] != want {
					t.Fatalf("ctx %v batch %d row %d: group %d, the model's %d", withCtx, e, i, gids[i], want)
				}
			}
			if g.numSlots() != slots {
				growths, slots = growths+1, g.numSlots()
			}
		}
		if g.numGroups() != len(model) {
			t.Fatalf("ctx %v: %d groups, the model has %d", withCtx, g.numGroups(), len(model))
		}
		// 64 → 256 → 1 K → 4 K → 16 K slots for about 6 K groups
		// (doubling: eight growths).
		if len(model) < 4000 || growths > 4 {
			t.Fatalf("ctx %v: %d groups grew the table %d times, want at most 4", withCtx, len(model), growths)
		}
	}
}
