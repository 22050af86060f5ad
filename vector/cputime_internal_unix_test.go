//go:build linux || darwin || freebsd

package vector

import "syscall"

// cpuNanos is the CPU time (user and system, all threads) the process has
// used, in nanoseconds: what internal benchmarks report per row, as the
// machine's load does not inflate it the way it inflates elapsed time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
