package stateful

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// TestSortSessionRefsMatchesFullSort checks sortSessionRefs against a
// full sort by (key, start, rec, row) on random refs in (rec, row) order:
// few or many keys, ties on start, sessions out of order; and the same
// through one sessionScratch reused across all the trials.
func TestSortSessionRefsMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var sc sessionScratch
	for trial := 0; trial < 500; trial++ {
		nKeys := 1 + rng.Intn(20)
		var refs []sessionRef
		for rec := 0; rec < 1+rng.Intn(3); rec++ {
			for row := 0; row < rng.Intn(30); row++ {
				refs = append(refs, sessionRef{key: int32(rng.Intn(nKeys)), start: arrow.Timestamp(rng.Intn(8)), end: arrow.Timestamp(rng.Intn(20)), rec: int32(rec), row: int32(row)})
			}
		}
		want := slices.Clone(refs)
		slices.SortFunc(want, func(a, b sessionRef) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.start, b.start), cmp.Compare(a.rec, b.rec), cmp.Compare(a.row, b.row))
		})
		if got := sortSessionRefs(refs, nKeys); !slices.Equal(got, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, got, want)
		}
		if got := sc.sortRefs(refs, nKeys); !slices.Equal(got, want) {
			t.Fatalf("trial %d, reused scratch: got %v, want %v", trial, got, want)
		}
	}
}
