package stateful

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomRemap drops each of groups ids with probability drop and numbers
// the others densely in order, as LiveAggregate.Compact does.
func randomRemap(rng *rand.Rand, groups int, drop float64) ([]int32, int) {
	remap := make([]int32, groups)
	n := 0
	for g := range remap {
		if rng.Float64() < drop {
			remap[g] = -1
			continue
		}
		remap[g] = int32(n)
		n++
	}
	return remap, n
}

// TestStoreKeysRemapMatchesModel keeps random keys for random groups
// (in id order, as epochs keep them, or in another order, as after a
// restart; some groups past the bounds' length, some never kept), then
// renumbers them and checks every new id's key against a map model, and
// that the arena holds only the kept groups' keys, over many renumberings
// of the same storeKeys (the in-place path reuses its buffers).
func TestStoreKeysRemapMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 30))
	for round := range 60 {
		var k storeKeys
		model := map[int32][]byte{} // by current id
		groups := 0
		inOrder := round%3 != 0
		for step := range 12 {
			// New groups, some of their keys kept.
			added := rng.IntN(400)
			order := make([]int, added)
			for i := range order {
				order[i] = groups + i
			}
			if !inOrder {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			total := groups + added
			bounds := total
			if rng.IntN(4) == 0 {
				bounds = groups + added/2 // later groups never reserved
			}
			k.reserve(bounds, 0)
			for _, g := range order {
				if g >= bounds || rng.IntN(5) == 0 {
					continue
				}
				key := fmt.Appendf(nil, "r%d-s%d-g%d-%s", round, step, g, string(make([]byte, rng.IntN(9))))
				k.keep(int32(g), key)
				model[int32(g)] = key
			}
			groups = total
			remap, n := randomRemap(rng, groups, rng.Float64())
			k.remap(remap, n)
			next := map[int32][]byte{}
			bytes := 0
			for old, g := range remap {
				if key, ok := model[int32(old)]; ok && g >= 0 {
					next[g] = key
					bytes += len(key)
				}
			}
			model, groups = next, n
			for g := range int32(groups) {
				if got, want := k.of(g), model[g]; !slices.Equal(got, want) {
					t.Fatalf("round %d step %d: group %d has key %q, want %q", round, step, g, got, want)
				}
			}
			if k.held() != bytes {
				t.Fatalf("round %d step %d: arena holds %d bytes, the kept keys %d", round, step, k.held(), bytes)
			}
		}
	}
}

// TestRemapInMatchesModel renumbers random by-group slices (shorter and
// longer than the groups) and checks them against a fresh slice filled
// from the old ids.
func TestRemapInMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 77))
	for round := range 500 {
		groups := rng.IntN(300)
		remap, n := randomRemap(rng, groups, rng.Float64())
		s := make([]int32, rng.IntN(groups+20), 400)
		for i := range s {
			s[i] = int32(1 + rng.IntN(1000))
		}
		want := make([]int32, n)
		for old, g := range remap {
			if g >= 0 && old < len(s) {
				want[g] = s[old]
			}
		}
		got := remapIn(slices.Clone(s), remap, n)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %d groups -> %d, len %d: got %v, want %v", round, groups, n, len(s), got, want)
		}
		if tail := got[len(got):cap(got)]; slices.ContainsFunc(tail[:min(len(tail), len(s))], func(v int32) bool { return v != 0 }) {
			t.Fatalf("round %d: values left past the cut", round)
		}
	}
}
