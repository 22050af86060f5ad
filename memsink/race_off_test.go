//go:build !race

package memsink_test

const raceEnabled = false
