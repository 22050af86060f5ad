//go:build !linux

package checkpoint

import "os"

// fdatasync falls back to fsync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }

// Fdatasync is fdatasync for the other packages that keep durable files
// (the memory sink's log): f's data and size flushed, not its timestamps.
func Fdatasync(f *os.File) error { return fdatasync(f) }
