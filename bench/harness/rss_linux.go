package harness

import (
	"io"
	"os"
)

func resetPeakRSS() bool {
	// "5" resets the peak resident set size (Linux 4.0 and later).
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func peakRSS() (int64, bool) {
	hwm, ok := statusBytes("VmHWM:")
	// The high-water mark is updated lazily: the current figure, read
	// later, can be above it.
	cur, _ := statusBytes("VmRSS:")
	return max(hwm, cur), ok
}

func currentRSS() (int64, bool) { return statusBytes("VmRSS:") }

// rssParts splits the current resident set into anonymous memory (heap,
// stacks, mapped buffers) and file pages (mostly the binary's own), from
// one read of the status file.
func rssParts() (anon, file int64) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	anon, _ = statusField(raw, "RssAnon:")
	file, _ = statusField(raw, "RssFile:")
	return anon, file
}

// statusBytes reads a "<key> <n> kB" line of /proc/self/status.
func statusBytes(key string) (int64, bool) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return statusField(raw, key)
}

// openStatus opens /proc/self/status for a statusReader.
func openStatus() (io.ReaderAt, io.Closer, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}
