package harness

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// burn spins on the calling thread until it has used d of CPU.
func burn(t *testing.T, d time.Duration) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := threadCPU()
	if !ok {
		t.Skip("no per-thread CPU time on this platform")
	}
	x := uint64(1)
	for {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if t1, _ := threadCPU(); t1-t0 >= d {
			break
		}
	}
	if x == 0 {
		t.Log(x)
	}
}

// TestSpanAsideLeavesOutBookkeeping: CPU used inside Aside is not in the
// span's figure, CPU used outside it is. CPU time, not wall time: a
// loaded machine delays the burns but does not change what they use.
func TestSpanAsideLeavesOutBookkeeping(t *testing.T) {
	if _, ok := threadCPU(); !ok {
		t.Skip("no per-thread CPU time on this platform")
	}
	const work, aside = 40 * time.Millisecond, 200 * time.Millisecond
	s := StartSpan()
	burn(t, work)
	s.Aside(func() { burn(t, aside) })
	_, cpu := s.Stop()
	if got := s.AsideCPU(); got < aside {
		t.Errorf("AsideCPU = %v, want at least the %v burnt inside Aside", got, aside)
	}
	// The figure holds the work (and whatever else the process ran
	// meanwhile, such as the collector) but not the aside's 200 ms.
	if cpu < work || cpu >= aside {
		t.Errorf("span CPU = %v, want at least the work's %v and less than the aside's %v", cpu, work, aside)
	}
}

// TestSettleReturnsFreeHeap: after Settle the garbage of an earlier run
// is neither live nor kept as free heap pages (the next measured run
// touches its memory afresh, as the first one did).
func TestSettleReturnsFreeHeap(t *testing.T) {
	const size, piece = 64 << 20, 4 << 10
	garbage := make([][]byte, size/piece)
	for i := range garbage {
		garbage[i] = make([]byte, piece)
		garbage[i][0] = 1
	}
	garbage = nil
	runtime.GC() // freed, but kept by the runtime as free heap
	Settle()
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	// A margin of an eighth of the garbage: the runtime (more so under
	// -race) keeps a few pages of its own as free heap; without Settle
	// nearly all 64 MiB stay there.
	if free := s[0].Value.Uint64(); free > size/8 {
		t.Errorf("free heap kept after Settle = %d bytes, want the %d freed returned to the OS", free, size)
	}
	_ = garbage
}
