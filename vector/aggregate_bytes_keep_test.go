package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestBytesGrouperKeepGroupsMatchesModel groups batches of string keys,
// dictionary-encoded (one dictionary kept over several batches, as a
// streaming source sends them, so that the dictionary shortcut's groups
// outlive compactions) or plain, through a bytes grouper, and keeps a
// random subset of the groups now and then (keepGroups, Compact's in-place
// path). After every batch the group of every row and the key of every
// group must be the model's: keys numbered in order of first appearance,
// the kept ones renumbered in order, a dropped key numbered afresh when it
// comes back, and every group's row count its key's rows since it was
// first numbered.
//
// With a second, int64 key (GROUP BY s, n, as YSB's campaign and window)
// the dictionary batches go through the tuple cache instead.
func TestBytesGrouperKeepGroupsMatchesModel(t *testing.T) {
	for _, composite := range []bool{false, true} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprint(composite, seed), func(t *testing.T) { testBytesKeep(t, composite, seed) })
		}
	}
}

func testBytesKeep(t *testing.T, composite bool, seed uint64) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{String}
	if composite {
		types = append(types, Int64)
	}
	gr, err := newGrouper(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := gr.(*bytesGrouper)
	if !ok {
		t.Fatalf("grouper %T, want a bytes grouper", gr)
	}
	defer g.release()
	rng := rand.New(rand.NewPCG(seed, 5))
	words := make([]string, 300)
	for i := range words {
		words[i] = fmt.Sprintf("w%03d", i)
	}
	var dict arrow.Array
	defer func() {
		if dict != nil {
			dict.Release()
		}
	}()
	newDict := func() {
		if dict != nil {
			dict.Release()
		}
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for _, i := range rng.Perm(len(words))[:50+rng.IntN(150)] {
			b.Append(words[i])
		}
		dict = b.NewArray()
	}
	newDict()
	ids := map[string]int32{}
	var order []string
	counts := map[string]int64{} // rows by key, kept groups' carried
	keeps := 0
	for step := range 200 {
		n := 1 + rng.IntN(120)
		var col arrow.Array
		var keys []string
		nums := make([]int64, n)
		for i := range nums {
			nums[i] = rng.Int64N(3)
		}
		if rng.IntN(4) == 0 {
			b := array.NewStringBuilder(mem)
			for range n {
				w := words[rng.IntN(len(words))]
				b.Append(w)
				keys = append(keys, w)
			}
			col = b.NewArray()
			b.Release()
		} else {
			if rng.IntN(10) == 0 {
				newDict()
			}
			ib := array.NewInt32Builder(mem)
			d := dict.(*array.String)
			for range n {
				j := rng.IntN(d.Len())
				ib.Append(int32(j))
				keys = append(keys, d.Value(j))
			}
			idx := ib.NewArray()
			ib.Release()
			col = array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: String}, idx, dict)
			idx.Release()
		}
		cols := []arrow.Array{col}
		if composite {
			nb := array.NewInt64Builder(mem)
			nb.AppendValues(nums, nil)
			cols = append(cols, nb.NewArray())
			nb.Release()
			for i := range keys {
				keys[i] = fmt.Sprint(keys[i], "|", nums[i])
			}
		}
		gids := make([]int32, n)
		err := g.group(cols, gids)
		releaseArrays(cols)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			counts[k]++
			want, ok := ids[k]
			if !ok {
				want = int32(len(order))
				ids[k] = want
				order = append(order, k)
			}
			if gids[i] != want {
				t.Fatalf("step %d row %d (%s): group %d, want %d", step, i, k, gids[i], want)
			}
		}
		if g.numGroups() != len(order) {
			t.Fatalf("step %d: %d groups, want %d", step, g.numGroups(), len(order))
		}
		got, err := g.keys(mem, 0, g.numGroups())
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range order {
			v := got[0].(*array.String).Value(i)
			if composite {
				v = fmt.Sprint(v, "|", got[1].(*array.Int64).Value(i))
			}
			if v != w {
				t.Fatalf("step %d: group %d has key %q, want %q", step, i, v, w)
			}
		}
		releaseArrays(got)
		rows := make([]int64, g.numGroups())
		if err := g.t.rowCountsContext(context.Background(), rows); err != nil {
			t.Fatal(err)
		}
		for gid, n := range g.extra {
			rows[gid] += n
		}
		for i, w := range order {
			if rows[i] != counts[w] {
				t.Fatalf("step %d: group %d (%s) counted %d rows, want %d", step, i, w, rows[i], counts[w])
			}
		}
		if rng.IntN(5) == 0 {
			var live []int32
			var kept []string
			for gid, w := range order {
				if rng.IntN(3) != 0 {
					live = append(live, int32(gid))
					kept = append(kept, w)
				}
			}
			g.keepGroups(live)
			keeps++
			for _, w := range order {
				if ids[w] >= 0 && !slices.Contains(kept, w) {
					delete(counts, w)
				}
			}
			order = kept
			clear(ids)
			for i, w := range order {
				ids[w] = int32(i)
			}
		}
	}
	if keeps == 0 || len(order) == 0 {
		t.Fatal("no groups kept: the test did not reach keepGroups")
	}
}
