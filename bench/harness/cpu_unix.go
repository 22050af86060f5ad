//go:build unix

package harness

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) the process has used so far,
// over all its threads: the difference across a run divided into its work
// gives work per core-second, whatever the parallelism.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// ProcessFaults is the number of minor page faults the process has taken
// so far (getrusage's ru_minflt): on these machines a first touch of a
// fresh page costs 13–17 µs, so faults taken by a run are a large part of
// its CPU (PERF_NOTES.md).
func ProcessFaults() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}
