package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkFdatasync measures this disk's own cost of what an epoch makes
// durable: append 256 bytes to a file and fdatasync it, as an epoch log
// append does. Besides ns/op it reports the p50 and p99 of one append
// (a physical floor for the epoch latency with fsync on: no epoch that
// makes its records durable can be faster than its fdatasync).
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "log"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
