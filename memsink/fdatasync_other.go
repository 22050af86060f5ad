//go:build !linux

package memsink

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
