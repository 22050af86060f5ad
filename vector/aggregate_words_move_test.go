package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMoveSlotsKeepsEveryGroupReachable: a growth moves the slots of the
// old table into the doubled one in slot order (moveSlots), in runs of
// slots when it is cancellable. Over nearly full small tables, whose
// probe runs wrap past the last slot into the first ones, every group
// must land in exactly one slot of the new table, with its words, on the
// probe chain from its hash's home (no empty slot before it), whatever
// the cut into runs; a group moved from the wrapped head of a run before
// the run's own start, or a run split between two calls, must not be
// lost or left unreachable.
func TestMoveSlotsKeepsEveryGroupReachable(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			k := 1 + rng.IntN(3)
			sw := k + 1
			size := 8 << rng.IntN(4)
			old := make([]uint64, size*sw)
			n := size/2 + rng.IntN(size/2) // up to full but one
			if n >= size {
				n = size - 1
			}
			want := map[int32][]uint64{}
			for gid := range int32(n) {
				tup := make([]uint64, k)
				for j := range tup {
					// few distinct words: many equal home slots, long runs
					tup[j] = uint64(rng.IntN(1 << 20))
				}
				tup[0] = uint64(gid) // distinct tuples
				placeWords(old, size-1, tupleHash(tup), gid, tup)
				want[gid] = tup
			}
			newSize := 2 * size
			slots := make([]uint64, newSize*sw)
			step := (1 + rng.IntN(size)) * sw // runs of old slots, as rehashContext cuts them
			for lo := 0; lo < len(old); lo += step {
				moveSlots(slots, newSize-1, old[lo:min(lo+step, len(old))], k)
			}
			seen := map[int32]bool{}
			for p := range newSize {
				s := slots[p*sw : p*sw+sw]
				if s[0] == 0 {
					continue
				}
				gid := int32(uint32(s[0])) - 1
				tup, ok := want[gid]
				if !ok || seen[gid] {
					t.Fatalf("slot %d holds group %d: unknown or twice", p, gid)
				}
				seen[gid] = true
				h := tupleHash(tup)
				if s[0] != wordsSlot(h, gid) {
					t.Fatalf("group %d: slot word %#x, want %#x", gid, s[0], wordsSlot(h, gid))
				}
				for j := range k {
					if s[1+j] != tup[j] {
						t.Fatalf("group %d: slot words %v, want %v", gid, s[1:], tup)
					}
				}
				for q := int(h) & (newSize - 1); q != p; q = (q + 1) & (newSize - 1) {
					if slots[q*sw] == 0 {
						t.Fatalf("group %d at slot %d: empty slot %d on its chain from home %d", gid, p, q, int(h)&(newSize-1))
					}
				}
			}
			if len(seen) != n {
				t.Fatalf("%d groups in the new table, want %d", len(seen), n)
			}
		})
	}
}
