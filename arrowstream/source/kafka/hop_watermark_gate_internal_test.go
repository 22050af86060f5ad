package kafka

import (
	"math/rand/v2"
	"testing"
)

// TestHopGateReleasesOnlyConsumed checks the watermark's consumption gate
// against a brute-force model over random histories: candidates with
// growing stable ends (as listings are), consumption that grows per
// partition. The released watermark is the largest candidate whose ends
// the consumption covers (while at most maxGatePending wait), never a
// larger one, and it never goes back.
func TestHopGateReleasesOnlyConsumed(t *testing.T) {
	const parts = 4
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var g hopGate
		type cand struct {
			us   int64
			ends map[int32]int64
		}
		var offered []cand
		ends := map[int32]int64{}
		consumed := map[int32]int64{}
		us := int64(0)
		prev, prevHas := int64(0), false
		steps := 1 + r.IntN(maxGatePending-1)
		for step := 0; step < steps; step++ {
			if r.IntN(3) > 0 {
				us += int64(r.IntN(3)) // may repeat
				e := map[int32]int64{}
				for p := int32(0); p < parts; p++ {
					ends[p] += int64(r.IntN(3))
					e[p] = ends[p]
				}
				g.offer(us, e)
				offered = append(offered, cand{us, e})
			}
			view := map[int32]int64{}
			for p := int32(0); p < parts; p++ {
				if consumed[p] < ends[p] && r.IntN(2) == 0 {
					consumed[p] += 1 + r.Int64N(ends[p]-consumed[p])
				}
				if consumed[p] > 0 || r.IntN(2) == 0 {
					view[p] = consumed[p] // a group that never committed a partition omits it
				}
			}
			got, has := g.release(view)
			want, wantHas := int64(0), false
			for _, c := range offered {
				if covered(c.ends, view) && (!wantHas || c.us > want) {
					want, wantHas = c.us, true
				}
			}
			if has != wantHas || got != want {
				t.Fatalf("seed %d step %d: released %d (%v), want %d (%v)", seed, step, got, has, want, wantHas)
			}
			if prevHas && (!has || got < prev) {
				t.Fatalf("seed %d step %d: watermark went back from %d to %d (%v)", seed, step, prev, got, has)
			}
			prev, prevHas = got, has
		}
	}
}

// TestHopGateBoundsPending: candidates that are never consumed stay
// bounded in number, and the ones kept release in order.
func TestHopGateBoundsPending(t *testing.T) {
	var g hopGate
	for i := int64(1); i <= 1000; i++ {
		g.offer(i, map[int32]int64{0: i})
	}
	if len(g.pending) > maxGatePending {
		t.Fatalf("%d candidates pending, want at most %d", len(g.pending), maxGatePending)
	}
	if us, ok := g.release(map[int32]int64{}); ok {
		t.Fatalf("released %d with nothing consumed", us)
	}
	us, ok := g.release(map[int32]int64{0: 500})
	if !ok || us > 500 {
		t.Fatalf("released %d (%v) with offset 500 consumed, want at most 500", us, ok)
	}
	if us, ok := g.release(map[int32]int64{0: 1000}); !ok || us != 1000 {
		t.Fatalf("released %d (%v) with everything consumed, want 1000", us, ok)
	}
}
