//go:build !race

package stateful

const raceEnabled = false
