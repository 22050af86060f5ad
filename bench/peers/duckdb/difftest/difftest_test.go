package difftest

import (
	"context"
	"testing"
)

// TestAgainstDuckDB compares a few generated cases with DuckDB. Longer
// runs: go run ./cmd/duckdifftest -duration 30m -seed N.
func TestAgainstDuckDB(t *testing.T) {
	var total Stats
	for seed := uint64(1); seed <= 20; seed++ {
		found, st, err := Check(context.Background(), seed)
		if err != nil {
			t.Fatal(err)
		}
		total.Add(st)
		for _, m := range found {
			t.Error(m.Report())
		}
	}
	t.Log(total)
	if total.Compared == 0 {
		t.Fatal("no query was compared: the generator's DuckDB subset fails in one engine everywhere")
	}
}
