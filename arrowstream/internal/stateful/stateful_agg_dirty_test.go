package stateful

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortDirtyMatchesModel notes random sets of changed groups in random
// first-change order (stamps of earlier epochs left in between, as
// touch leaves them) and checks sortDirty against a sort of the (group,
// added) pairs: the same groups, ascending when the set is large enough,
// untouched in order when it is not, each with its own added flag.
func TestSortDirtyMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	var l aggLive
	for round := range 200 {
		groups := 1 + rng.IntN(40_000)
		l.touched = growTo(l.touched[:0], groups)
		for g := range l.touched {
			l.touched[g] = uint32(rng.IntN(3)) // earlier epochs' stamps
		}
		l.stamp = 3 + uint32(round)
		var n int
		switch round % 3 {
		case 0:
			n = rng.IntN(min(groups, sortDirtyMin)) // too few to sort
		case 1:
			n = groups / (1 + rng.IntN(8)) // a large share
		default:
			n = rng.IntN(groups + 1)
		}
		l.dirty, l.added = l.dirty[:0], l.added[:0]
		for _, g := range rng.Perm(groups)[:n] {
			l.touched[g] = l.stamp
			l.dirty = append(l.dirty, int32(g))
			l.added = append(l.added, rng.IntN(2) == 0)
		}
		type pair struct {
			g     int32
			added bool
		}
		var before []pair
		for i, g := range l.dirty {
			before = append(before, pair{g, l.added[i]})
		}
		l.sortDirty()
		var after []pair
		for i, g := range l.dirty {
			after = append(after, pair{g, l.added[i]})
		}
		sorts := n >= sortDirtyMin && 16*n >= groups
		if !sorts {
			if !slices.Equal(after, before) {
				t.Fatalf("round %d: %d of %d groups reordered, want them left", round, n, groups)
			}
			continue
		}
		want := slices.Clone(before)
		slices.SortFunc(want, func(a, b pair) int { return int(a.g) - int(b.g) })
		if !slices.Equal(after, want) {
			t.Fatalf("round %d: %d of %d groups: sortDirty gave %d pairs, not the sorted ones", round, n, groups, len(after))
		}
	}
}
