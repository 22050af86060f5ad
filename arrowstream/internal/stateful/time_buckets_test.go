package stateful

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimeBucketsMatchesModel pushes random ids at random times (few
// distinct times, as windows give, and many), pops what is due at random
// limits and renumbers the ids at random, and checks every pop against a
// brute-force list: the ids at or below the limit, by time, each time's
// in push order.
func TestTimeBucketsMatchesModel(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		spread := []int64{3, 50, 100000}[seed%3]
		var b timeBuckets
		type entry struct {
			at int64
			id int32
		}
		var model []entry // push order
		next := int32(0)
		base := int64(0)
		for step := 0; step < 300; step++ {
			switch r := rng.IntN(10); {
			case r < 6:
				for i := rng.IntN(20); i > 0; i-- {
					at := base + rng.Int64N(spread)
					b.push(at, next)
					model = append(model, entry{at, next})
					next++
				}
			case r < 9:
				limit := base + rng.Int64N(spread) - spread/4
				got := b.popDue(limit, nil)
				var due, keep []entry
				for _, e := range model {
					if e.at <= limit {
						due = append(due, e)
					} else {
						keep = append(keep, e)
					}
				}
				slices.SortStableFunc(due, func(x, y entry) int { return int(min(max(x.at-y.at, -1), 1)) })
				want := make([]int32, 0, len(due))
				for _, e := range due {
					want = append(want, e.id)
				}
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("seed %d step %d: popDue(%d) = %v, want %v", seed, step, limit, got, want)
				}
				model = keep
				if b.n != len(model) {
					t.Fatalf("seed %d step %d: %d ids indexed, want %d", seed, step, b.n, len(model))
				}
				base += rng.Int64N(spread/2 + 1)
			default: // renumber every indexed id (compaction)
				remap := make([]int32, next)
				for i := range remap {
					remap[i] = -1
				}
				order := rng.Perm(len(model))
				for i, j := range order {
					remap[model[j].id] = int32(i)
				}
				if g, ok := b.remap(remap); !ok {
					t.Fatalf("seed %d step %d: remap lost id %d", seed, step, g)
				}
				for j := range model {
					model[j].id = remap[model[j].id]
				}
				next = int32(len(model))
			}
		}
	}
}

// BenchmarkTimeBuckets runs epochs of pushes and pops through the index
// in steady state: "distinct" is Nexmark q4's aggregation (600 groups an
// epoch, each at its own time, about two epochs' worth open), "sliding"
// a 10-second window sliding by 2 (each row's group pushed in 5 windows
// in turn, 2,000 groups an epoch):
//
//	go test -run '^$' -bench TimeBuckets -benchmem ./arrowstream/internal/stateful/
func BenchmarkTimeBuckets(b *testing.B) {
	const epochUs = 1_000_000
	b.Run("distinct", func(b *testing.B) {
		var tb timeBuckets
		rng := rand.New(rand.NewPCG(1, 2))
		var out []int32
		id := int32(0)
		b.ReportAllocs()
		for e := int64(0); b.Loop(); e++ {
			for range 600 {
				tb.push(e*epochUs+rng.Int64N(2*epochUs), id)
				id = (id + 1) % (1 << 20)
			}
			out = tb.popDue(e*epochUs, out[:0])
		}
	})
	b.Run("sliding", func(b *testing.B) {
		var tb timeBuckets
		var out []int32
		id := int32(0)
		b.ReportAllocs()
		for e := int64(0); b.Loop(); e++ {
			for range 400 {
				for w := range int64(5) {
					// the windows ending in the next 10 s, 2 s apart
					tb.push((e/2+w+1)*2*epochUs, id)
					id = (id + 1) % (1 << 20)
				}
			}
			out = tb.popDue(e*epochUs, out[:0])
		}
	})
}
