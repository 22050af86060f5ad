package harness

// RSSWatch measures the peak resident set size (RSS) of the process over
// a piece of work: the memory the OS gives the process (Go heap and its
// garbage, Arrow buffers, stacks, the runtime), which the Arrow
// allocator's peak does not see. Workloads report it as "peak_rss" beside
// "peak_memory".
type RSSWatch struct {
	reset bool
}

// StartRSS starts watching. Where the OS allows it (Linux: writing 5 to
// /proc/self/clear_refs) it resets the process's high-water mark, so that
// Peak covers only the work after StartRSS; elsewhere Peak is the
// process's lifetime peak (Reset tells which).
func StartRSS() RSSWatch {
	return RSSWatch{reset: resetPeakRSS()}
}

// Reset reports whether the high-water mark was reset at StartRSS.
func (w RSSWatch) Reset() bool { return w.reset }

// Peak is the highest RSS in bytes since StartRSS (see Reset); ok is false
// where the OS does not tell.
func (w RSSWatch) Peak() (bytes int64, ok bool) { return peakRSS() }

// CurrentRSS is the process's resident set size in bytes now; ok is false
// where the OS does not tell.
func CurrentRSS() (bytes int64, ok bool) { return currentRSS() }

// RSSFigure is the "peak_rss" figure of a workload from w, or nothing
// where the OS does not tell.
func RSSFigure(workload string, w RSSWatch) []Figure {
	peak, ok := w.Peak()
	if !ok || peak <= 0 {
		return nil
	}
	return []Figure{{Workload: workload, Figure: "peak_rss", Value: float64(peak), Unit: "bytes"}}
}
