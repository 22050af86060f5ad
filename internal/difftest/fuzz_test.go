package difftest

import (
	"context"
	"testing"
)

// FuzzDifferential runs the engine oracles (optimizer on vs off, TLP over
// WHERE, HAVING and aggregates, leaks, panics) over the case generated
// from a seed. The seed corpus runs in `go test`; `go test -fuzz
// FuzzDifferential ./internal/difftest` explores further seeds.
func FuzzDifferential(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		found, _, err := Check(context.Background(), seed, Options{QueriesPerCase: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range found {
			t.Error(m.Report())
		}
	})
}
