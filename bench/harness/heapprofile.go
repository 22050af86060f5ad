package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// HeapProfileEnv names a directory: when set, the workloads write the Go
// heap profile of live objects at the end of their measured run (while
// the query still holds its state and table) as <workload>.pprof there,
// to find the memory the held bytes do not count
// (`go tool pprof -sample_index=inuse_space -top FILE`).
const HeapProfileEnv = "ARROWSTREAM_BENCH_HEAPPROFILE"

// WriteHeapProfile writes the heap profile of workload when HeapProfileEnv
// is set (nothing otherwise). It collects garbage twice first: the
// profile shows the heap as of the last completed collection, and the
// allocations of the cycle before it are published only by the next one.
func WriteHeapProfile(workload string) error {
	dir := os.Getenv(HeapProfileEnv)
	if dir == "" {
		return nil
	}
	runtime.GC()
	runtime.GC()
	path := filepath.Join(dir, workload+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("harness: heap profile of %s: %w", workload, err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("harness: heap profile %s: %w", path, err)
	}
	return f.Close()
}
