//go:build race

package memsink_test

// raceEnabled: the race detector changes what allocations cost; tests
// that measure the Go heap skip those checks under it.
const raceEnabled = true
