//go:build !linux

package harness

import (
	"errors"
	"io"
)

// The resident set size is read from Linux's /proc only; elsewhere the
// figures are omitted.

func resetPeakRSS() bool { return false }

func peakRSS() (int64, bool) { return 0, false }

func currentRSS() (int64, bool) { return 0, false }

func rssParts() (anon, file int64) { return 0, 0 }

func openStatus() (io.ReaderAt, io.Closer, error) {
	return nil, nil, errors.New("harness: no /proc/self/status on this platform")
}
