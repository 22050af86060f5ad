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

// TestChunkedTimeHeapOrder pushes and pops random times across several
// chunks, interleaved, and checks that pops come in time order, that
// every pushed value comes back once, and that chunks emptied by pops
// are reused rather than added to.
func TestChunkedTimeHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	var h chunkedTimeHeap[int]
	var want []int64
	next := 0
	seen := map[int]bool{}
	popDue := func(limit int64) {
		prev := int64(-1 << 63)
		for h.due(limit) {
			e := h.pop()
			if e.at < prev || e.at > limit {
				t.Fatalf("popped %d after %d (limit %d)", e.at, prev, limit)
			}
			if seen[e.v] {
				t.Fatalf("value %d popped twice", e.v)
			}
			seen[e.v] = true
			prev = e.at
			i := slices.Index(want, e.at)
			if i < 0 {
				t.Fatalf("popped time %d never pushed", e.at)
			}
			want = slices.Delete(want, i, i+1)
		}
		for _, at := range want {
			if at <= limit {
				t.Fatalf("time %d at or below %d left in the heap", at, limit)
			}
		}
	}
	for round := range 6 {
		for range 3*chunkedHeapLen + rng.IntN(chunkedHeapLen) {
			at := int64(rng.IntN(10_000)) + int64(round)*1_000
			h.push(at, next)
			want = append(want, at)
			next++
		}
		if h.len() != len(want) {
			t.Fatalf("round %d: %d entries, want %d", round, h.len(), len(want))
		}
		chunks := h.capacity()
		popDue(int64(round)*1_000 + 5_000)
		if h.capacity() != chunks {
			t.Fatalf("round %d: pops changed the chunks (%d → %d entries)", round, chunks, h.capacity())
		}
	}
	popDue(1 << 62)
	if h.len() != 0 || len(seen) != next {
		t.Fatalf("%d entries left, %d of %d values popped", h.len(), len(seen), next)
	}
	// The chunks stay for the pushes after: no new chunk until full.
	chunks := h.capacity()
	for i := range chunks {
		h.push(int64(i), i)
	}
	if h.capacity() != chunks {
		t.Fatalf("refilling %d entries grew the heap to %d", chunks, h.capacity())
	}
}
