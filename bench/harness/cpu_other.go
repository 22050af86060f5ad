//go:build !unix

package harness

import "time"

// ProcessCPU is not available on this platform: ok is false, and callers
// fall back to wall-clock time.
func ProcessCPU() (time.Duration, bool) { return 0, false }

// ProcessFaults is not available on this platform: ok is false.
func ProcessFaults() (int64, bool) { return 0, false }
