//go:build !race

package arrowstream

const raceEnabled = false
