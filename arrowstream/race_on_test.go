//go:build race

package arrowstream

// raceEnabled: the race detector multiplies memory use several times and
// slows everything down; tests that measure memory skip under it.
const raceEnabled = true
