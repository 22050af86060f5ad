//go:build !linux

package vector

// prefault does nothing where MADV_POPULATE_WRITE does not exist: the
// copy faults the buffer's pages in.
func prefault([]byte) {}
