//go:build !linux

package vector

// prefault does nothing where MADV_POPULATE_WRITE does not exist: the
// copy faults the buffer's pages in.
func prefault([]byte) {}

// prefaultMin is the size from which freshSlots prefaults rather than
// clears (prefault_linux.go).
const prefaultMin = 16 << 10
