//go:build !race

package kafka_test

// raceEnabled reports a -race build.
const raceEnabled = false
