//go:build !linux

package harness

import "time"

// threadCPU is not available on this platform: Span.Aside takes nothing
// out.
func threadCPU() (time.Duration, bool) { return 0, false }
