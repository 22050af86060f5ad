package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// File systems whose files live in memory: there the page cache is the
// storage, and writing around it buys nothing.
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// openDirect opens f's file (at path) again with O_DIRECT, or returns
// nil and why it does not.
func openDirect(f *os.File, path string) (*os.File, string) {
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &fs); err != nil {
		return nil, fmt.Sprintf("statfs: %v", err)
	}
	if fs.Type == tmpfsMagic || fs.Type == ramfsMagic {
		return nil, "the file system keeps its files in memory"
	}
	d, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		return nil, fmt.Sprintf("open with O_DIRECT: %v", err)
	}
	st1, err1 := f.Stat()
	st2, err2 := d.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(st1, st2) {
		d.Close()
		return nil, "the path no longer names the open file"
	}
	return d, ""
}

// lockExclusive takes an exclusive advisory lock (flock) on f's open file
// without waiting. It reports whether f now holds it; errBusy when another
// open file (of this process or another) holds it. A file system without
// flock (ENOLCK, EOPNOTSUPP, EINVAL, ENOSYS) answers false and no error:
// its appends then check the file's size instead.
func lockExclusive(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, errBusy
	default:
		return false, nil
	}
}
