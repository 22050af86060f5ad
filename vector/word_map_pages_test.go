package vector

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"
)

// wordOfHash returns the word whose fixedHash is h (fixedHash is a
// bijection: an odd multiplier, and x ^ x>>32 its own inverse).
func wordOfHash(h uint64) uint64 {
	// The multiplier's inverse mod 2^64 by Newton's iteration.
	const c = 0x9e3779b97f4a7c15
	inv := uint64(c)
	for range 6 {
		inv *= 2 - c*inv
	}
	x := h * inv
	return x ^ x>>32
}

// TestWordMapPagesMatchModel: words whose hashes share many top bits (so
// that pages split without telling them apart until the directory's bound
// makes the page grow instead), a word given hundreds of ids (a page no
// split can divide), and plain words, added and removed at random against
// a model; after every phase every word finds its ids, Len and Each agree,
// and the directory stays within its bound of entries per page.
func TestWordMapPagesMatchModel(t *testing.T) {
	if w := wordOfHash(fixedHash(12345)); w != 12345 {
		t.Fatalf("wordOfHash(fixedHash(12345)) = %d", w)
	}
	rng := rand.New(rand.NewSource(5))
	var m WordMap
	model := map[uint64][]int32{}
	size := 0
	nextID := int32(0)
	words := []func() uint64{
		// Hashes equal in their top 30 bits.
		func() uint64 { return wordOfHash(0x2bcdef12<<34 | uint64(rng.Intn(3000))) },
		// One word, many ids.
		func() uint64 { return 77 },
		// Plain words.
		func() uint64 { return uint64(rng.Intn(20000)) },
	}
	check := func(phase int) {
		t.Helper()
		if m.Len() != size {
			t.Fatalf("phase %d: Len %d, want %d", phase, m.Len(), size)
		}
		for w, ids := range model {
			var got []int32
			it := m.Probe(w)
			for id := it.Next(); id >= 0; id = it.Next() {
				got = append(got, id)
			}
			slices.Sort(got)
			if want := slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
				t.Fatalf("phase %d: word %#x has %d ids, want %d", phase, w, len(got), len(want))
			}
		}
		n := 0
		m.Each(func(w uint64, id int32) {
			n++
			if !slices.Contains(model[w], id) {
				t.Fatalf("phase %d: Each gives %#x → %d, not in the model", phase, w, id)
			}
		})
		if n != size {
			t.Fatalf("phase %d: Each gives %d, want %d", phase, n, size)
		}
		if len(m.dir) > 2*maxWordDirRatio*max(1, len(m.pages)) {
			t.Fatalf("phase %d: a directory of %d entries for %d pages", phase, len(m.dir), len(m.pages))
		}
		for _, p := range m.pages {
			if !wordFits(p.n, len(p.slots)) {
				t.Fatalf("phase %d: a page of %d slots holds %d words", phase, len(p.slots), p.n)
			}
		}
	}
	for phase := range 6 {
		removeOdds := []int{0, 8, 3, 1, 8, 1}[phase]
		for range 8000 {
			w := words[rng.Intn(len(words))]()
			ids := model[w]
			if removeOdds > 0 && len(ids) > 0 && rng.Intn(removeOdds+1) != 0 {
				k := rng.Intn(len(ids))
				if !m.Remove(w, ids[k]) {
					t.Fatalf("phase %d: Remove(%#x, %d) found nothing", phase, w, ids[k])
				}
				model[w] = slices.Delete(ids, k, k+1)
				if len(model[w]) == 0 {
					delete(model, w)
				}
				size--
				continue
			}
			if len(ids) > 0 && w != 77 {
				if got, added := m.FindOrAdd(w, nextID); added || !slices.Contains(ids, got) {
					t.Fatalf("phase %d: FindOrAdd(%#x) = %d, %v; ids %v", phase, w, got, added, ids)
				}
				continue
			}
			m.Add(w, nextID)
			model[w] = append(model[w], nextID)
			nextID++
			size++
		}
		check(phase)
	}
	if len(m.pages) < 8 {
		t.Fatalf("only %d pages: the test did not split", len(m.pages))
	}
}

// TestWordMapGrowsByPages: a map grown one word at a time to 100,000
// words allocates little more than the pages it keeps: a page splits in
// place into itself and one new page, where a table doubled allocated
// all of it again (and dropped the old) at every growth.
func TestWordMapGrowsByPages(t *testing.T) {
	var m WordMap
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 100_000 {
		m.Add(uint64(i)*0x100000001+7, int32(i))
	}
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d bytes allocated, %d kept", alloc, m.HeapBytes())
	if alloc > m.HeapBytes()*5/4 {
		t.Fatalf("growing to %d words allocated %d bytes, over 5/4 of the %d kept", m.Len(), alloc, m.HeapBytes())
	}
}
