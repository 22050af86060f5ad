//go:build !linux

package checkpoint

import (
	"os"
	"runtime"
)

// openDirect: direct writes are used on Linux only (other systems spell
// them differently: F_NOCACHE, FILE_FLAG_NO_BUFFERING).
func openDirect(f *os.File, path string) (*os.File, string) {
	return nil, "O_DIRECT is not used on " + runtime.GOOS
}

// lockExclusive: appends outside Linux check the file's size instead of
// holding a lock (segmentlog.go).
func lockExclusive(f *os.File) (bool, error) {
	return false, nil
}
