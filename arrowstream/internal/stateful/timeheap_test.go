package stateful

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimeHeapPopsInTimeOrder checks the heap against sorting: random
// pushes (with repeated times) interleaved with pops of what is due.
func TestTimeHeapPopsInTimeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var h timeHeap[int]
		var model []int64
		limit := int64(0)
		for step := 0; step < 300; step++ {
			if rng.IntN(3) > 0 {
				at := rng.Int64N(100)
				h.push(at, int(at))
				model = append(model, at)
				continue
			}
			limit += rng.Int64N(10)
			slices.Sort(model)
			for h.due(limit) {
				e := h.pop()
				if len(model) == 0 || e.at != model[0] || int64(e.v) != e.at {
					t.Fatalf("round %d: popped %+v, model %v", round, e, model)
				}
				model = model[1:]
			}
			if len(model) > 0 && model[0] <= limit {
				t.Fatalf("round %d: %d is due at %d but the heap says nothing is", round, model[0], limit)
			}
		}
		if len(h) != len(model) {
			t.Fatalf("round %d: heap holds %d, model %d", round, len(h), len(model))
		}
	}
}
