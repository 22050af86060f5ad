package main

import (
	"errors"
	"io/fs"
	"log/slog"

	"github.com/arrowstream/arrowstream/internal/hugeheap"
)

// hugePagesUsage is --huge-pages' help, shared by bench, run and serve.
// Off by default: it saves CPU where the heap grows (q20 +34 %) but
// raises the resident set (docs/performance.md, sessions 25 and 26).
const hugePagesUsage = "back the Go heap with transparent huge pages: madvise(MADV_HUGEPAGE) its arenas, again as it grows; less CPU for fresh memory, more resident memory (needs THP \"madvise\" mode; docs/operations.md)"

// startHugeHeap starts the heap's huge-page advice when on (nil when off,
// or when the kernel's THP mode cannot be read) and logs what was
// advised. A host without THP (no mode file, not Linux) is logged at
// info, any other failure as a warning; neither stops the program. The
// advice is process-wide: the program starts it, once.
func startHugeHeap(on bool, o hugeheap.Options, logger *slog.Logger) *hugeheap.Advisor {
	if !on {
		logger.Debug("huge pages: off (--huge-pages=false), nothing advised")
		return nil
	}
	a, err := hugeheap.Start(o)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, hugeheap.ErrUnsupported) {
		logger.Info("huge pages: the host has no transparent huge pages, nothing advised", "err", err)
		return nil
	}
	if err != nil {
		logger.Warn("huge pages: nothing advised", "err", err)
		return nil
	}
	st := a.Stats()
	logger.Info("huge pages: "+st.String(), "mode", st.Mode, "mappings", st.Mappings, "bytes", st.Bytes)
	return a
}
