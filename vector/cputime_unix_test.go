//go:build linux || darwin || freebsd

package vector_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system, all threads) the
// process has used: a measure of work that the machine's load does not
// inflate, unlike elapsed time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
