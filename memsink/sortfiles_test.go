package memsink

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sortedEntryNames lists n epochs' entry names in recovery's order: by
// epoch, an epoch's file before its view snapshot (every seventh epoch
// has one).
func sortedEntryNames(n int) []string {
	var names []string
	for e := int64(0); e < int64(n); e++ {
		names = append(names, epochFile(e))
		if e%7 == 3 {
			names = append(names, viewFile(e))
		}
	}
	return names
}

// TestSortFilesOrder: whatever order the names come in (recovery gathers
// the log's records from a map), sortFiles puts them in epoch order, an
// epoch's file before its view snapshot, and numerically (epoch 10 after
// epoch 9, not after 1).
func TestSortFilesOrder(t *testing.T) {
	want := sortedEntryNames(500)
	rng := rand.New(rand.NewPCG(33, 1))
	for round := 0; round < 20; round++ {
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortFiles(got)
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d: position %d is %s, want %s", round, i, got[i], want[i])
				}
			}
		}
	}
}

// TestSortFilesScales: a log of 200,000 records (a selective query's
// empty epochs are recorded one each; the crash harness's memsink
// workload reached 190,000 in minutes) sorts in well under a second. The
// insertion sort it replaced needed about n²/4 comparisons, each parsing
// two names: a restart spent minutes in it before its query started,
// and the crash harness's timer kills all landed there. The bound is
// generous for a loaded machine and the race detector.
func TestSortFilesScales(t *testing.T) {
	const n = 200_000
	names := make([]string, 0, n)
	for e := int64(0); e < n; e++ {
		names = append(names, epochFile(e))
	}
	want := slices.Clone(names)
	rand.New(rand.NewPCG(33, 2)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	done := make(chan struct{})
	go func() {
		defer close(done)
		sortFiles(names)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("sorting %d entry names took more than a minute", n)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("%d shuffled names not sorted back into epoch order", n)
	}
}
