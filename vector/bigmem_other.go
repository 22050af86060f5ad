//go:build !(linux || darwin || freebsd)

package vector

// Elsewhere large buffers stay on the Go heap.
const canMap = false

const pageBytes = 4096

func sysMap(size int) ([]byte, error) { return nil, errMap(size, errNoMap) }

func sysUnmap([]byte) {}

var errNoMap = errorString("memory mapping is not supported on this system")

type errorString string

func (e errorString) Error() string { return string(e) }
