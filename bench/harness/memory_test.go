package harness

import (
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestMemoryMeter: memory touched after StartMemory shows as growth over
// the baseline, the held bytes are the largest observed, and the ratios
// are growth and peak over held.
func TestMemoryMeter(t *testing.T) {
	m := StartMemory()
	if m.Baseline() == 0 {
		t.Skip("no RSS figures on this platform")
	}
	const n = 32 << 20
	a := InputAllocator() // mapped: resident once touched, outside the Go heap
	b := a.Allocate(n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	runtime.GC() // a collection inside the run, for gc_cpu_seconds
	m.ObserveHeld(n / 4)
	m.ObserveHeld(n / 2)
	m.ObserveHeld(n / 8)
	m.ObservePooled(100)
	m.ObservePooled(50)
	m.SampleHeap()
	a.Free(b)
	figs := map[string]float64{}
	for _, f := range m.Figures("w") {
		if f.Workload != "w" || f.Unit == "" {
			t.Errorf("figure %+v", f)
		}
		figs[f.Figure] = f.Value
	}
	if g := m.Growth(); g < n || figs["peak_rss_growth"] != float64(g) {
		t.Errorf("growth %d (figure %v) after touching %d bytes", g, figs["peak_rss_growth"], n)
	}
	if figs["peak_held"] != n/2 || figs["baseline_rss"] != float64(m.Baseline()) || figs["peak_pool_free"] != 100 {
		t.Errorf("figures %v", figs)
	}
	if r := figs["rss_growth_per_held_byte"]; r != float64(m.Growth())/(n/2) || r < 2 {
		t.Errorf("growth per held byte %v, figures %v", r, figs)
	}
	if r := figs["peak_rss_per_held_byte"]; r != float64(m.Peak())/(n/2) {
		t.Errorf("peak per held byte %v, figures %v", r, figs)
	}
	// The mapped buffer is not in the Go heap.
	if h, ok := figs["heap_after_gc"]; !ok || h <= 0 || h >= n {
		t.Errorf("heap after GC %v with %d bytes mapped", h, n)
	}
	// The runtime's share is split by class; the baseline's file pages are
	// the binary's, its anonymous memory holds the runtime.
	if figs["peak_go_resident"] <= 0 || figs["at_peak_heap_objects"] <= 0 ||
		figs["at_peak_heap_objects"] > figs["peak_go_resident"] || figs["at_peak_stacks"] <= 0 {
		t.Errorf("runtime figures %v", figs)
	}
	// The mapped buffer was touched before the first ObserveHeld: the
	// sampled anonymous growth sees it (n bytes for n/2 held).
	if r := figs["anon_growth_per_held_byte"]; r < 1.9 {
		t.Errorf("anonymous growth per held byte %v after touching %d bytes, figures %v", r, n, figs)
	}
	// The collector's CPU is an estimate: a collection of a small heap
	// may count as none, and the figure is then left out.
	if v, ok := figs["gc_cpu_seconds"]; ok && v <= 0 {
		t.Errorf("gc_cpu_seconds %v", v)
	}
	if figs["baseline_rss_file"] <= 0 || figs["baseline_rss_anon"] <= 0 ||
		figs["baseline_rss_file"]+figs["baseline_rss_anon"] > figs["baseline_rss"]*1.01 {
		t.Errorf("baseline parts %v", figs)
	}
	// The peak was read before the buffer was freed: it does not move.
	if p := m.Peak(); p != int64(figs["peak_rss"]) {
		t.Errorf("peak moved from %v to %d", figs["peak_rss"], p)
	}
}

// TestInputAllocator: large buffers are mapped (zeroed, resizable, freed
// to the OS), small ones come from Go's allocator; a checked wrapper ends
// at zero.
func TestInputAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(InputAllocator())
	defer mem.AssertSize(t, 0)
	for _, size := range []int{1, 100, minInputMapped - 1, minInputMapped, 1 << 20} {
		b := mem.Allocate(size)
		if len(b) != size {
			t.Fatalf("Allocate(%d) returned %d bytes", size, len(b))
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("Allocate(%d): byte %d is %d", size, i, b[i])
			}
			b[i] = 7
		}
		for _, to := range []int{size/2 + 1, size + 10, 3 * minInputMapped} {
			nb := mem.Reallocate(to, b)
			if len(nb) != to {
				t.Fatalf("Reallocate(%d→%d) returned %d bytes", size, to, len(nb))
			}
			for i := range nb {
				want := byte(0)
				if i < min(len(b), to) {
					want = 7
				}
				if nb[i] != want {
					t.Fatalf("Reallocate(%d→%d): byte %d is %d, want %d", size, to, i, nb[i], want)
				}
				nb[i] = 7
			}
			b = nb
		}
		mem.Free(b)
	}
	runtime.GC()
}
