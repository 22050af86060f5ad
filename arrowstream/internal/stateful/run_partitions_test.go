package stateful

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunEachPartitionRunsActiveOnce checks the partition runner against
// its contract: every active partition's work runs exactly once, no
// inactive one runs, each error and panic lands in its partition's slot,
// at most GOMAXPROCS run at a time, and active is not called while work
// runs.
func TestRunEachPartitionRunsActiveOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 200} {
		for _, every := range []int{1, 2, 5, 1000} {
			t.Run(fmt.Sprintf("n=%d/every=%d", n, every), func(t *testing.T) {
				runs := make([]atomic.Int32, n)
				var running, peak atomic.Int32
				var maxGoroutines atomic.Int32
				base := runtime.NumGoroutine()
				var mu sync.Mutex
				activeDuringWork := false
				active := func(p int) bool {
					if running.Load() > 0 {
						mu.Lock()
						activeDuringWork = true
						mu.Unlock()
					}
					return p%every == 0
				}
				errs := runEachPartition(7, n, active, func(p int) error {
					now := running.Add(1)
					defer running.Add(-1)
					for {
						old := peak.Load()
						if now <= old || peak.CompareAndSwap(old, now) {
							break
						}
					}
					if g := int32(runtime.NumGoroutine()); g > maxGoroutines.Load() {
						maxGoroutines.Store(g)
					}
					runs[p].Add(1)
					runtime.Gosched()
					switch p % 3 {
					case 1:
						return fmt.Errorf("partition %d failed", p)
					case 2:
						panic(fmt.Sprintf("boom %d", p))
					}
					return nil
				})
				if len(errs) != n {
					t.Fatalf("%d error slots for %d partitions", len(errs), n)
				}
				if activeDuringWork {
					t.Error("active was called while work ran")
				}
				if int(peak.Load()) > runtime.GOMAXPROCS(0) {
					t.Errorf("%d partitions ran at once, GOMAXPROCS is %d", peak.Load(), runtime.GOMAXPROCS(0))
				}
				// A goroutine per worker, not per partition: the test's
				// other goroutines may come and go, so a margin.
				if extra := int(maxGoroutines.Load()) - base; extra > runtime.GOMAXPROCS(0)+4 {
					t.Errorf("%d goroutines beside the test's while partitions ran, want at most GOMAXPROCS (%d)", extra, runtime.GOMAXPROCS(0))
				}
				for p := 0; p < n; p++ {
					want := int32(0)
					if p%every == 0 {
						want = 1
					}
					if got := runs[p].Load(); got != want {
						t.Errorf("partition %d ran %d times, want %d", p, got, want)
					}
					err := errs[p]
					switch {
					case want == 0 || p%3 == 0:
						if err != nil {
							t.Errorf("partition %d: unexpected error %v", p, err)
						}
					case p%3 == 1:
						if err == nil || err.Error() != fmt.Sprintf("partition %d failed", p) {
							t.Errorf("partition %d: error %v", p, err)
						}
					case p%3 == 2:
						if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("state partition %d of operator 7 panicked: boom %d", p, p)) {
							t.Errorf("partition %d: error %v", p, err)
						}
					}
				}
			})
		}
	}
}

// TestRunEachPartitionSmallEpochAllocations: an epoch with no active
// partition allocates only the error slots, one with a single active
// partition runs it on the caller with nothing more than the list of
// active partitions (before: the list, two closures, a counter and a wait
// group whatever the epoch held; about five allocations).
func TestRunEachPartitionSmallEpochAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	work := func(int) error { return nil }
	for _, tc := range []struct {
		name   string
		active func(int) bool
		max    float64
	}{
		{"none", func(int) bool { return false }, 1},
		{"one", func(p int) bool { return p == 3 }, 2},
	} {
		got := testing.AllocsPerRun(100, func() { runEachPartition(1, 8, tc.active, work) })
		if got > tc.max {
			t.Errorf("%s active: %.0f allocations per call, want at most %.0f", tc.name, got, tc.max)
		}
	}
	var caller bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		id := goroutineID()
		runEachPartition(1, 8, func(p int) bool { return p == 5 }, func(int) error {
			caller = goroutineID() == id
			return nil
		})
	}()
	<-done
	if !caller {
		t.Error("the single active partition ran on another goroutine than the caller")
	}
}

// goroutineID is the current goroutine's number, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}
