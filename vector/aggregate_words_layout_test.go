package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// layoutBatch makes n rows of (window struct, int32 key) in one of the
// shapes that make or break the derived words: mode 0 windows whose end is
// their start plus 10 and keys never null; 1 with null keys; 2 ends at
// other distances; 3 keys equal to the window's start plus 5 (a leaf
// derived from a leaf of another width); 4 null windows. windows is how
// many distinct windows the batch draws from (1: a constant start).
func layoutBatch(mem memory.Allocator, rng *rand.Rand, n, mode, windows, base int) []arrow.Array {
	sb := array.NewStructBuilder(mem, windowKeyType)
	st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
	kb := array.NewInt32Builder(mem)
	for range n {
		s := int64(base+rng.IntN(windows)) * 10
		e := s + 10
		if mode == 2 && rng.IntN(3) == 0 {
			e = s + int64(rng.IntN(3))*5
		}
		if mode == 4 && rng.IntN(4) == 0 {
			sb.AppendNull()
			st.Append(arrow.Timestamp(rng.IntN(100)))
			en.Append(arrow.Timestamp(rng.IntN(100)))
		} else {
			sb.Append(true)
			st.Append(arrow.Timestamp(s))
			en.Append(arrow.Timestamp(e))
		}
		switch {
		case mode == 1 && rng.IntN(5) == 0:
			kb.AppendNull()
		case mode == 3:
			kb.Append(int32(s + 5))
		default:
			kb.Append(int32(rng.IntN(40)) - 20)
		}
	}
	cols := []arrow.Array{sb.NewArray(), kb.NewArray()}
	sb.Release()
	kb.Release()
	return cols
}

// layoutRowKey is the model's key of row i: Spark's grouping equality
// (a null struct's fields do not count; nulls equal).
func layoutRowKey(cols []arrow.Array, i int) string {
	w, k := cols[0].(*array.Struct), cols[1].(*array.Int32)
	ws := "null"
	if w.IsValid(i) {
		st, en := w.Field(0).(*array.Timestamp), w.Field(1).(*array.Timestamp)
		ws = fmt.Sprintf("[%d,%d)", st.Value(i), en.Value(i))
	}
	ks := "null"
	if k.IsValid(i) {
		ks = fmt.Sprint(k.Value(i))
	}
	return ws + " " + ks
}

// TestWordsLayoutMatchesModel: whatever words the grouper derives, it
// numbers the groups as a model of the full keys does (in order of first
// appearance, renumbered by keepGroups and emptied by resetGroups), counts
// their rows, and rebuilds their keys exactly, over batches that keep, and
// then break, each relation it learned (window end from start, the null
// word, a leaf of another width from the start).
func TestWordsLayoutMatchesModel(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 19))
			g := newWordsGrouper([]arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int32})
			if g == nil {
				t.Fatal("no words grouper for (window, int)")
			}
			ids := map[string]int32{}
			var keys []string // model: key by group
			var rows []int64
			first := rng.IntN(5) // the shape the first batch teaches
			for batch := range 12 {
				mode := first
				if batch > 0 && rng.IntN(3) == 0 {
					mode = rng.IntN(5)
				}
				n := 1 + rng.IntN([]int{40, 700}[rng.IntN(2)])
				cols := layoutBatch(mem, rng, n, mode, 1+rng.IntN(3)*rng.IntN(2), batch)
				got := make([]int32, n)
				if err := g.group(cols, got); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					key := layoutRowKey(cols, i)
					id, ok := ids[key]
					if !ok {
						id = int32(len(keys))
						ids[key] = id
						keys = append(keys, key)
						rows = append(rows, 0)
					}
					rows[id]++
					if got[i] != id {
						t.Fatalf("batch %d (mode %d) row %d %s: group %d, want %d", batch, mode, i, key, got[i], id)
					}
				}
				releaseArrays(cols)
				checkLayoutKeys(t, mem, g, keys, rows)
				switch rng.IntN(4) {
				case 0: // drop some groups, renumbering the rest
					var live []int32
					var kept []string
					var keptRows []int64
					for gid := range keys {
						if rng.IntN(2) == 0 {
							live = append(live, int32(gid))
							kept = append(kept, keys[gid])
							keptRows = append(keptRows, rows[gid])
						}
					}
					g.rows = growZero(g.rows, g.numGroups())
					g.keepGroups(live)
					keys, rows = kept, keptRows
				case 1:
					g.resetGroups()
					keys, rows = nil, nil
				}
				clear(ids)
				for gid, key := range keys {
					ids[key] = int32(gid)
				}
			}
		})
	}
}

// checkLayoutKeys checks the grouper's groups against the model's keys
// and row counts.
func checkLayoutKeys(t *testing.T, mem memory.Allocator, g *wordsGrouper, keys []string, rows []int64) {
	t.Helper()
	if g.numGroups() != len(keys) {
		t.Fatalf("%d groups, the model has %d", g.numGroups(), len(keys))
	}
	if got, want := fmt.Sprint(g.finish()), fmt.Sprint(rows); got != want {
		t.Fatalf("rows by group %s, want %s", got, want)
	}
	gids := make([]int32, len(keys))
	for i := range gids {
		gids[i] = int32(len(keys) - 1 - i) // any order
	}
	out, err := g.keysOf(mem, gids)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArrays(out)
	for i, gid := range gids {
		if got := layoutRowKey(out, i); got != keys[gid] {
			t.Fatalf("group %d rebuilt as %s, want %s", gid, got, keys[gid])
		}
	}
}
