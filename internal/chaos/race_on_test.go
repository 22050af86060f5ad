//go:build race

package chaos

// raceEnabled: the race detector makes the workers several times slower;
// the harness test then runs a smaller workload within its time bound.
const raceEnabled = true
