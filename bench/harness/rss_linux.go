package harness

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
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
// stacks, mapped buffers) and file pages (mostly the binary's own).
func rssParts() (anon, file int64) {
	anon, _ = statusBytes("RssAnon:")
	file, _ = statusBytes("RssFile:")
	return anon, file
}

// statusBytes reads a "<key> <n> kB" line of /proc/self/status.
func statusBytes(key string) (int64, bool) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == key && string(f[2]) == "kB" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			return n << 10, err == nil
		}
	}
	return 0, false
}
