package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestWordsSlotsHoldKeys: the words grouper's slots are one word each
// (tag and group), and a probe decides on the group's tuple. Over batches that grow the table (plainly and through
// groupContext's interruptible growth), widen the stored layout, drop
// groups (keepGroups) and empty the table (resetGroups), the groups must
// be numbered as a map of the full keys numbers them, and after every
// step each group must sit in exactly one slot, on its probe chain, with
// the tag of its tuple's hash: a slot left stale by a rehash, a widening or a
// renumbering would send a later row to the wrong group. Most seeds
// force the keys' tags to collide (hashDrop), so that a probe that took a
// tag match for a key match would be caught.
func TestWordsSlotsHoldKeys(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 1219))
			g := newWordsGrouper([]arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int32})
			// Two seeds in three keep only the hash's top 8 or 4 bits:
			// every key then shares its tag and home with many others,
			// and only the tuples tell them apart.
			g.hashDrop = []uint64{0, 1<<56 - 1, 1<<60 - 1}[seed%3]
			ids := map[string]int32{}
			var keys []string
			var rows []int64
			first := rng.IntN(5)
			for batch := range 10 {
				mode := first
				if batch > 0 && rng.IntN(3) == 0 {
					mode = rng.IntN(5) // may break a derived word: widen
				}
				// Up to 40 keys × 60 windows: enough groups to double the
				// table from 64 slots several times.
				n := 1 + rng.IntN([]int{50, 3000}[rng.IntN(2)])
				cols := layoutBatch(mem, rng, n, mode, 1+rng.IntN(60), batch*7)
				got := make([]int32, n)
				var err error
				if rng.IntN(2) == 0 {
					err = g.groupContext(context.Background(), cols, got)
				} else {
					err = g.group(cols, got)
				}
				if err != nil {
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
				checkWordsSlots(t, g)
				checkLayoutKeys(t, mem, g, keys, rows)
				switch rng.IntN(4) {
				case 0:
					var live []int32
					var kept []string
					var keptRows []int64
					for gid := range keys {
						if rng.IntN(3) != 0 {
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
				checkWordsSlots(t, g)
				clear(ids)
				for gid, key := range keys {
					ids[key] = int32(gid)
				}
			}
		})
	}
}

// checkWordsSlots checks the table against the tuples: one word a slot,
// at most half of the slots used, every group in exactly one slot whose
// tag is its hash's, reachable from its home slot (the hash's top bits)
// without crossing an empty one.
func checkWordsSlots(t *testing.T, g *wordsGrouper) {
	t.Helper()
	k, size := g.k, g.numSlots()
	if size == 0 || size&(size-1) != 0 || g.mask != size-1 || len(g.slots) != size || g.shift != slotShift(size) {
		t.Fatalf("table of %d words, %d slots, mask %d, shift %d", len(g.slots), size, g.mask, g.shift)
	}
	groups := g.numGroups()
	if 2*groups > size {
		t.Fatalf("%d groups in %d slots: over half full", groups, size)
	}
	seen := make([]bool, groups)
	for p, s := range g.slots {
		if s == 0 {
			continue
		}
		gid := int(uint32(s)) - 1
		if gid < 0 || gid >= groups || seen[gid] {
			t.Fatalf("slot %d holds group %d (of %d; seen before: %v)", p, gid, groups, gid >= 0 && gid < groups && seen[gid])
		}
		seen[gid] = true
		h := tupleHash(g.tuples[gid*k:gid*k+k]) &^ g.hashDrop
		if s != wordsSlot(h, int32(gid)) {
			t.Fatalf("slot %d of group %d: tag %#x, want %#x", p, gid, s, wordsSlot(h, int32(gid)))
		}
		home := int(h >> g.shift)
		for q := home; q != p; q = (q + 1) & g.mask {
			if g.slots[q] == 0 {
				t.Fatalf("group %d in slot %d, but slot %d on its chain from %d is empty", gid, p, q, home)
			}
		}
	}
	for gid, ok := range seen {
		if !ok {
			t.Fatalf("group %d is in no slot", gid)
		}
	}
}
