package vector

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"
)

// TestWordMapMatchesModel: random adds, removals and lookups, against a
// map from word to the ids added for it. Words come from a small space
// (runs collide and wrap around the table's end), from a space of words
// differing only in their high bits, and now and then a word gets a
// second id (a hash shared by two keys), FindOrAdd finds a word's one id
// or adds it; the table grows from empty and
// shrinks to empty again by removal, which must leave every remaining
// word reachable (backward shift) and Len exact.
func TestWordMapMatchesModel(t *testing.T) {
	for _, space := range []struct {
		name string
		word func(r *rand.Rand) uint64
	}{
		{"small", func(r *rand.Rand) uint64 { return uint64(r.Intn(500)) }},
		{"high-bits", func(r *rand.Rand) uint64 { return uint64(r.Intn(300)) << 40 }},
		{"wide", func(r *rand.Rand) uint64 { return r.Uint64() % 5000 * 0x9e3779b97f4a7c15 }},
	} {
		t.Run(space.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(3))
			var m WordMap
			model := map[uint64][]int32{}
			nextID := int32(0)
			size := 0
			check := func(step int) {
				t.Helper()
				if m.Len() != size {
					t.Fatalf("step %d: Len %d, want %d", step, m.Len(), size)
				}
				for w, ids := range model {
					var got []int32
					it := m.Probe(w)
					for id := it.Next(); id >= 0; id = it.Next() {
						got = append(got, id)
					}
					slices.Sort(got)
					want := slices.Sorted(slices.Values(ids))
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: word %#x has ids %v, want %v", step, w, got, want)
					}
					if f := m.Find(w); !slices.Contains(ids, f) {
						t.Fatalf("step %d: Find(%#x) = %d, not one of %v", step, w, f, ids)
					}
				}
				n := 0
				m.Each(func(w uint64, id int32) {
					n++
					if !slices.Contains(model[w], id) {
						t.Fatalf("step %d: Each gives %#x → %d, not in the model", step, w, id)
					}
				})
				if n != size {
					t.Fatalf("step %d: Each gives %d mappings, want %d", step, n, size)
				}
			}
			for step := range 30_000 {
				// Three phases: growth, churn, drain.
				removeOdds := 3
				switch {
				case step < 10_000:
					removeOdds = 6
				case step >= 20_000:
					removeOdds = 1
				}
				w := space.word(rng)
				ids := model[w]
				switch {
				case rng.Intn(removeOdds+1) != 0 && len(ids) > 0:
					k := rng.Intn(len(ids))
					if !m.Remove(w, ids[k]) {
						t.Fatalf("step %d: Remove(%#x, %d) found nothing", step, w, ids[k])
					}
					model[w] = slices.Delete(ids, k, k+1)
					if len(model[w]) == 0 {
						delete(model, w)
					}
					size--
				case rng.Intn(removeOdds+1) != 0:
					if m.Remove(w, 12345678) {
						t.Fatalf("step %d: Remove of an absent id reports it removed", step)
					}
					if len(ids) == 0 && m.Find(w) != -1 {
						t.Fatalf("step %d: Find(%#x) of an absent word = %d", step, w, m.Find(w))
					}
				case len(ids) == 1 && rng.Intn(2) == 0:
					if got, added := m.FindOrAdd(w, nextID); added || got != ids[0] {
						t.Fatalf("step %d: FindOrAdd(%#x) of a present word = %d, %v; want %d", step, w, got, added, ids[0])
					}
				case len(ids) == 0 && rng.Intn(2) == 0:
					if got, added := m.FindOrAdd(w, nextID); !added || got != nextID {
						t.Fatalf("step %d: FindOrAdd(%#x) of an absent word = %d, %v; want %d added", step, w, got, added, nextID)
					}
					model[w] = append(ids, nextID)
					nextID++
					size++
				case len(ids) == 0 || rng.Intn(8) == 0:
					m.Add(w, nextID)
					model[w] = append(ids, nextID)
					nextID++
					size++
				}
				if step%499 == 0 || step == 29_999 {
					check(step)
				}
			}
			// FindAll against Find, with skipped rows.
			ws := make([]uint64, 1000)
			skip := make([]bool, len(ws))
			for i := range ws {
				ws[i] = space.word(rng)
				skip[i] = rng.Intn(7) == 0
			}
			for i := range 50 {
				m.Add(ws[i], nextID)
				nextID++
			}
			ids := make([]int32, len(ws))
			m.FindAll(ws, skip, ids)
			for i, w := range ws {
				want := m.Find(w)
				if skip[i] {
					want = -1
				}
				if ids[i] != want {
					t.Fatalf("FindAll row %d (%#x) = %d, Find %d", i, w, ids[i], want)
				}
			}
		})
	}
}

// TestWordMapEmpty: a map never added to answers every call without
// slots.
func TestWordMapEmpty(t *testing.T) {
	var m WordMap
	if m.Find(7) != -1 || m.Remove(7, 0) || m.Len() != 0 || m.HeapBytes() != 0 {
		t.Fatal("an empty map reports a word")
	}
	it := m.Probe(7)
	if it.Next() != -1 {
		t.Fatal("an empty map's probe finds an id")
	}
	ids := []int32{5, 5}
	m.FindAll([]uint64{1, 2}, nil, ids)
	if ids[0] != -1 || ids[1] != -1 {
		t.Fatalf("FindAll on an empty map = %v", ids)
	}
}

// BenchmarkWordMapFindAll: looking up 4,096 words, half present, in maps
// of growing size (powers of two, and sizes between: 1,400 and 90,000
// keys, which a table at most half full holds in 4,096 and 262,144 slots,
// one kept under three quarters full in half that).
//
//	go test -run XXX -bench WordMapFindAll ./vector/
func BenchmarkWordMapFindAll(b *testing.B) {
	for _, n := range []int{1 << 10, 1400, 1 << 16, 90_000, 1 << 20} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var m WordMap
			rng := rand.New(rand.NewSource(1))
			for i := range n {
				m.Add(uint64(i)*7919, int32(i))
			}
			ws := make([]uint64, 4096)
			for i := range ws {
				ws[i] = uint64(rng.Intn(2*n)) * 7919
			}
			ids := make([]int32, len(ws))
			for b.Loop() {
				m.FindAll(ws, nil, ids)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ws)), "ns/word")
		})
	}
}
