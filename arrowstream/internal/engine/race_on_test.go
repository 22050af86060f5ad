//go:build race

package engine

// raceEnabled: the race detector multiplies memory use several times and
// slows everything down; tests that measure memory skip under it.
const raceEnabled = true
