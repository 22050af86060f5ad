//go:build race

package stateful

// raceEnabled: the race detector keeps values on the heap that escape
// analysis would not, so allocation counts are not checked under it.
const raceEnabled = true
