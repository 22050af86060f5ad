//go:build !linux

package vector_test

import "time"

// threadCPU: no per-thread CPU clock is read off Linux; the CPU measures of
// BenchmarkCancelLatency are then not reported.
func threadCPU(int) (time.Duration, bool) { return 0, false }

func currentTid() int { return 0 }
