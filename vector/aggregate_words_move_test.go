package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMoveSlotsKeepsEveryGroupReachable: a growth moves the slots of the
// old table into the larger one in slot order (moveSlots), in runs of
// slots when it is cancellable, from the slot words alone (their tag's
// top bits are the home). Over nearly full small tables, whose
// probe runs wrap past the last slot into the first ones, every group
// must land in exactly one slot of the new table, with its word, on the
// probe chain from its hash's home (no empty slot before it), whatever
// the cut into runs; a group moved from the wrapped head of a run before
// the run's own start, or a run split between two calls, must not be
// lost or left unreachable.
func TestMoveSlotsKeepsEveryGroupReachable(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			size := 8 << rng.IntN(4)
			old := make([]uint64, size)
			n := size/2 + rng.IntN(size/2) // up to full but one
			if n >= size {
				n = size - 1
			}
			// Few distinct hashes: many equal homes and tags, long runs.
			drop := []uint64{0, 1<<58 - 1, 1<<61 - 1}[rng.IntN(3)]
			want := map[int32]uint64{}
			for gid := range int32(n) {
				h := rng.Uint64() &^ drop
				placeSlot(old, slotShift(size), size-1, wordsSlot(h, gid))
				want[gid] = h
			}
			newSize := size << (1 + rng.IntN(2)) // doubled or fourfold
			slots := make([]uint64, newSize)
			shift := slotShift(newSize)
			step := 1 + rng.IntN(size) // runs of old slots, as rehashContext cuts them
			for lo := 0; lo < len(old); lo += step {
				moveSlots(slots, shift, old[lo:min(lo+step, len(old))])
			}
			seen := map[int32]bool{}
			for p, s := range slots {
				if s == 0 {
					continue
				}
				gid := int32(uint32(s)) - 1
				h, ok := want[gid]
				if !ok || seen[gid] {
					t.Fatalf("slot %d holds group %d: unknown or twice", p, gid)
				}
				seen[gid] = true
				if s != wordsSlot(h, gid) {
					t.Fatalf("group %d: slot word %#x, want %#x", gid, s, wordsSlot(h, gid))
				}
				home := int(h >> shift)
				for q := home; q != p; q = (q + 1) & (newSize - 1) {
					if slots[q] == 0 {
						t.Fatalf("group %d at slot %d: empty slot %d on its chain from home %d", gid, p, q, home)
					}
				}
			}
			if len(seen) != n {
				t.Fatalf("%d groups in the new table, want %d", len(seen), n)
			}
		})
	}
}
