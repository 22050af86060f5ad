package stateful

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestJoinNewPairsMatchModel: the pairs of an epoch's new rows against
// each other (no stored rows) are, in order, those of a nested-loop model
// (left row ascending then right row ascending when the right side is
// hashed, the mirror when the left is), for random keys with duplicates on
// both sides, null keys and excluded rows, either side smaller; their
// slices are allocated once at their size (grown by append, their
// capacity exceeded their length), and a warm partition's probe scratch
// is reused.
func TestJoinNewPairsMatchModel(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), newJoinSideLive[uint64]()}}
	defer lp.release()
	for trial := 0; trial < 300; trial++ {
		var fresh [2]*sideRows
		var n [2]int
		n[0], n[1] = rng.Intn(400), rng.Intn(400)
		space := 1 + rng.Intn(200)
		for i := range fresh {
			f := &sideRows{keyNull: make([]bool, n[i]), excluded: make([]bool, n[i]), words: make([]uint64, n[i])}
			for j := range f.words {
				f.words[j] = uint64(rng.Intn(space))
				f.keyNull[j] = rng.Intn(12) == 0
				f.excluded[j] = rng.Intn(12) == 0
			}
			fresh[i] = f
		}
		keys := [2][]uint64{fresh[0].words, fresh[1].words}
		// The model: the side with fewer rows is hashed (the right one on
		// a tie), the other's rows probe it in order.
		usable := func(i, j int) bool { return !fresh[i].keyNull[j] && !fresh[i].excluded[j] }
		var want []string
		build := 1
		if n[0] < n[1] {
			build = 0
		}
		probe := 1 - build
		for pj := 0; pj < n[probe]; pj++ {
			for bj := 0; bj < n[build]; bj++ {
				if usable(probe, pj) && usable(build, bj) && keys[probe][pj] == keys[build][bj] {
					l, r := pj, bj
					if build == 0 {
						l, r = bj, pj
					}
					want = append(want, fmt.Sprint(l, r))
				}
			}
		}
		segs := candidatesOK(lp, fresh, keys)
		var got []string
		for _, sg := range segs {
			if sg.l != nil || sg.r != nil {
				t.Fatalf("trial %d: a pairs source is a stored batch, with no stored rows", trial)
			}
			if cap(sg.li) != len(sg.li) || cap(sg.ri) != len(sg.ri) {
				t.Fatalf("trial %d: %d pairs in slices of capacity %d and %d, not allocated at their size", trial, len(sg.li), cap(sg.li), cap(sg.ri))
			}
			for k := range sg.li {
				got = append(got, fmt.Sprint(sg.li[k], sg.ri[k]))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (%d × %d rows, %d keys): pairs %v, model %v", trial, n[0], n[1], space, got, want)
		}
	}

	// Warm: the pairs and the segments; the probe's scratch, the row hash
	// and the pairs' lists are the partition's.
	fresh := [2]*sideRows{
		{keyNull: make([]bool, 300), excluded: make([]bool, 300), words: make([]uint64, 300)},
		{keyNull: make([]bool, 6000), excluded: make([]bool, 6000), words: make([]uint64, 6000)},
	}
	for j := range fresh[0].words {
		fresh[0].words[j] = uint64(j)
	}
	for j := range fresh[1].words {
		fresh[1].words[j] = uint64(rng.Intn(300))
	}
	keys := [2][]uint64{fresh[0].words, fresh[1].words}
	candidatesOK(lp, fresh, keys)
	allocs := testing.AllocsPerRun(20, func() { candidatesOK(lp, fresh, keys) })
	// The pairs and the segments: the row hash and its chains are the
	// partition's (a Go map and a chain per probe allocated 8 here),
	// 6,000 pairs grown by append cost 38, li and ri fresh each probe 4.
	if allocs > 2 {
		t.Fatalf("%v allocations per warm probe of 6,000 rows against 300", allocs)
	}
}
