//go:build race

package vector

// raceEnabled: the race detector changes what allocations cost (its
// instrumentation keeps values on the heap that escape analysis would
// not), so tests that measure the Go heap skip those checks under it;
// .ci/run runs those tests again without -race.
const raceEnabled = true
