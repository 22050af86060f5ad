package main

import (
	"log/slog"

	"github.com/arrowstream/arrowstream/internal/hugeheap"
)

// hugePagesUsage is --huge-pages' help, shared by bench, run and serve.
// Off by default: it saves CPU where the heap grows (q20 +34 %) but
// raises the peak resident set (q20's growth +19 %), docs/performance.md.
const hugePagesUsage = "back the Go heap with transparent huge pages: madvise(MADV_HUGEPAGE) its anonymous mappings, again as it grows; less CPU for fresh memory, more resident memory (needs THP \"madvise\" mode; docs/operations.md)"

// startHugeHeap starts the heap's huge-page advice when on (nil when off,
// or when the kernel's THP mode cannot be read: a warning, not an error)
// and logs what was advised. The advice is process-wide: the program
// starts it, once.
func startHugeHeap(on bool, reserve int64, logger *slog.Logger) *hugeheap.Advisor {
	if !on {
		logger.Debug("huge pages: off (--huge-pages=false), nothing advised")
		return nil
	}
	a, err := hugeheap.Start(hugeheap.Options{Reserve: reserve})
	if err != nil {
		logger.Warn("huge pages: nothing advised", "err", err)
		return nil
	}
	st := a.Stats()
	logger.Info("huge pages: "+st.String(), "mode", st.Mode, "mappings", st.Mappings, "bytes", st.Bytes)
	return a
}
