package stateful

import (
	"math/rand"
	"slices"
	"testing"
)

// TestJoinRowHashMatchesModel: one row hash rebuilt for 300 probes of
// random size (0 to 3,000 rows, so its table is cleared, kept and dropped
// for an outsized one) chains exactly the rows a model groups by key, in
// row order, skipping null and excluded rows, for fixed and byte keys;
// first and firstAll find each key's first row (-1 for keys it lacks and
// null probing keys); a warm rebuild allocates nothing.
func TestJoinRowHashMatchesModel(t *testing.T) {
	t.Run("fixed", func(t *testing.T) { testJoinRowHash(t, fixedTestKey) })
	t.Run("bytes", func(t *testing.T) { testJoinRowHash(t, bytesTestKey) })
}

func testJoinRowHash[K joinKey](t *testing.T, key func(int) K) {
	rng := rand.New(rand.NewSource(23))
	h := newJoinRowHash[K]()
	for trial := range 300 {
		n := rng.Intn(300)
		if rng.Intn(20) == 0 {
			n = 3000
		}
		space := 1 + rng.Intn(400)
		keys, null, excl := make([]K, n), make([]bool, n), make([]bool, n)
		model := map[K][]int32{}
		for j := range keys {
			keys[j] = key(rng.Intn(space))
			null[j] = rng.Intn(10) == 0
			excl[j] = rng.Intn(10) == 0
			if !null[j] && !excl[j] {
				model[keys[j]] = append(model[keys[j]], int32(j))
			}
		}
		h.build(keys, null, excl)
		if h.heads.Len() != len(model) {
			t.Fatalf("trial %d: %d chains, the model %d keys", trial, h.heads.Len(), len(model))
		}
		for k, want := range model {
			var got []int32
			for j := h.first(k); j >= 0; j = h.next[j] {
				got = append(got, j)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d: key %v chains rows %v, the model %v", trial, k, got, want)
			}
		}
		probe := make([]K, 200)
		pnull := make([]bool, len(probe))
		for i := range probe {
			probe[i] = key(rng.Intn(2 * space))
			pnull[i] = rng.Intn(8) == 0
		}
		out := make([]int32, len(probe))
		h.firstAll(probe, pnull, out)
		for i, k := range probe {
			want := int32(-1)
			if rows, ok := model[k]; ok && !pnull[i] {
				want = rows[0]
			}
			if out[i] != want {
				t.Fatalf("trial %d: firstAll of probing row %d (%v) = %d, want %d", trial, i, k, out[i], want)
			}
		}
	}
	keys, null := make([]K, 500), make([]bool, 500)
	for j := range keys {
		keys[j] = key(j % 120)
	}
	h.build(keys, null, null)
	if allocs := testing.AllocsPerRun(20, func() { h.build(keys, null, null) }); allocs > 0 {
		t.Fatalf("%v allocations to rebuild a warm row hash", allocs)
	}
}
