package harness

import (
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

func TestPercentileMedianPerCore(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, c := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(5), 99, 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
	} {
		if got := Percentile(c.in, c.p); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
		}
	}
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("Median = %v", got)
	}
	if got := PerCore(100, 2*time.Second, time.Second); got != 100 {
		t.Errorf("PerCore by CPU = %v, want 100", got)
	}
	if got := PerCore(100, 2*time.Second, 0); got != 50 {
		t.Errorf("PerCore without CPU = %v, want 50", got)
	}
}

func TestPeakAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := NewPeakAllocator(mem)
	a := p.Allocate(100)
	b := p.Allocate(50)
	p.Free(a)
	b = p.Reallocate(200, b)
	if p.Current() != 200 || p.Peak() != 200 {
		t.Fatalf("current %d peak %d, want 200 200", p.Current(), p.Peak())
	}
	p.Free(b)
	if p.Current() != 0 || p.Peak() != 200 {
		t.Fatalf("current %d peak %d, want 0 200", p.Current(), p.Peak())
	}
	p.ResetPeak()
	if p.Peak() != 0 {
		t.Fatalf("peak %d after reset", p.Peak())
	}
}

// TestRSSWatch: the peak covers memory touched after StartRSS, and the
// current RSS is within it. (Linux only: elsewhere nothing is reported.)
func TestRSSWatch(t *testing.T) {
	w := StartRSS()
	before, ok := w.Peak()
	if !ok {
		t.Skip("no RSS figures on this platform")
	}
	// Touch 64 MiB so that the peak must move past it.
	const n = 64 << 20
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	cur, ok := CurrentRSS()
	peak, _ := w.Peak()
	if !ok || peak < cur || peak < n || (w.Reset() && before > peak) {
		t.Errorf("peak %d (before %d, reset %v), current %d after touching %d bytes", peak, before, w.Reset(), cur, n)
	}
	if figs := RSSFigure("w", w); len(figs) != 1 || figs[0].Figure != "peak_rss" || figs[0].Value < n {
		t.Errorf("RSSFigure = %+v", figs)
	}
	runtime.KeepAlive(b)
}
