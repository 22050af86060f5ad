//go:build !(linux || darwin || freebsd)

package vector

// cpuNanos is not measured here: benchmarks report 0 CPU time.
func cpuNanos() int64 { return 0 }
