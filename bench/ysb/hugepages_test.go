package ysb

import (
	"fmt"
	"os"
	"testing"

	"github.com/arrowstream/arrowstream/internal/hugeheap"
)

// TestMain, with ARROWSTREAM_HUGE_PAGES=1, runs the package's tests and
// benchmarks with the Go heap advised MADV_HUGEPAGE, as `arrowstream
// bench --huge-pages` and the servers with --huge-pages run: the same
// test binary then measures BenchmarkPacedLatency's p99 with and without
// huge faults (docs/performance.md, issue 19).
func TestMain(m *testing.M) {
	var a *hugeheap.Advisor
	if os.Getenv("ARROWSTREAM_HUGE_PAGES") == "1" {
		var err error
		if a, err = hugeheap.Start(hugeheap.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, "ARROWSTREAM_HUGE_PAGES=1:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "huge pages:", a.Stats())
	}
	code := m.Run()
	a.Stop()
	os.Exit(code)
}
