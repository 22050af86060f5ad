package checkpoint

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data and the metadata needed to read it back (its
// size), without the timestamps an fsync also writes.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// Fdatasync is fdatasync for the other packages that keep durable files
// (the memory sink's log): f's data and size flushed, not its timestamps.
func Fdatasync(f *os.File) error { return fdatasync(f) }
