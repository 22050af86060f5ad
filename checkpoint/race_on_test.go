//go:build race

package checkpoint

// raceEnabled: under the race detector the package's background work is
// slow enough to overlap heap measures, which tests then skip.
const raceEnabled = true
