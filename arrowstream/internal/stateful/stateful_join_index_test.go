package stateful

import (
	"math/rand"
	"slices"
	"testing"
)

// TestJoinKeyIndexMatchesModel: random inserts and removals over a small
// key space (so that keys collect from one to dozens of refs, crossing the
// first piece, the carved second piece and heap growth, and removed keys
// come back), checked after every step against a map of slices. Pieces
// carved from one chunk must never see each other's refs.
func TestJoinKeyIndexMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	x := newJoinKeyIndex[uint64]()
	model := map[uint64][]joinRef[uint64]{}
	b := &joinBatch[uint64]{}
	for step := range 20_000 {
		k := uint64(rng.Intn(300))
		if rng.Intn(40) == 0 {
			x.remove(k)
			delete(model, k)
		} else {
			ref := joinRef[uint64]{b, int32(step)}
			_, had := model[k]
			if fresh := x.insert(k, ref); fresh == had {
				t.Fatalf("step %d: insert(%d) fresh=%v, key was indexed: %v", step, k, fresh, had)
			}
			model[k] = append(model[k], ref)
		}
		if step%97 != 0 && step < 19_999 {
			continue
		}
		if x.len() != len(model) {
			t.Fatalf("step %d: %d keys, want %d", step, x.len(), len(model))
		}
		for mk, want := range model {
			kr := x.get(mk)
			if kr == nil || !slices.Equal(kr.refs, want) || int(kr.live) != len(want) {
				t.Fatalf("step %d: key %d has %v, want %v", step, mk, kr, want)
			}
		}
	}
}
