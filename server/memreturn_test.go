package server

import (
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// fakeReturner is a memReturner whose returns and waits are recorded
// instead of run.
func fakeReturner(threshold int64, alloc any) (*memReturner, *[]time.Duration, *sync.Mutex) {
	r := newMemReturner(threshold, alloc, nil)
	var mu sync.Mutex
	var waits []time.Duration
	r.free = func() {}
	r.sleep = func(d time.Duration) {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
	}
	return r, &waits, &mu
}

// TestMemReturnerThreshold: releases below the threshold return nothing;
// the release that crosses it returns once and restarts the count.
func TestMemReturnerThreshold(t *testing.T) {
	r, _, _ := fakeReturner(100, nil)
	r.released(60)
	r.wg.Wait()
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns after 60 of 100 bytes", n)
	}
	r.released(50)
	r.wg.Wait()
	if n := r.returns.Load(); n != 1 {
		t.Fatalf("%d returns after 110 of 100 bytes, want 1", n)
	}
	r.released(60)
	r.wg.Wait()
	if n := r.returns.Load(); n != 1 {
		t.Fatalf("%d returns: the count did not restart", n)
	}
}

// TestMemReturnerOff: a negative threshold never returns, not even after
// a drop.
func TestMemReturnerOff(t *testing.T) {
	r, _, _ := fakeReturner(-1, nil)
	r.released(1 << 40)
	r.dropped()
	r.wg.Wait()
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns with the returner off", n)
	}
	var nilR *memReturner
	nilR.released(1 << 40) // a server without one (tests) is fine
	nilR.dropped()
}

// TestMemReturnerRateLimited: a second request within the interval waits
// out the rest of it before returning; requests made while a return is
// pending are served by it (the burst costs at most two returns).
func TestMemReturnerRateLimited(t *testing.T) {
	r, waits, mu := fakeReturner(1, nil)
	r.dropped()
	r.wg.Wait()
	// The wait lasts until the whole burst has been requested, as the
	// real one (the rest of a second) would: an instant fake sleep would
	// let a slow requester (race detector, loaded machine) see each of
	// its requests served alone.
	record, burst := r.sleep, make(chan struct{})
	r.sleep = func(d time.Duration) {
		record(d)
		<-burst
	}
	for range 50 {
		r.dropped()
	}
	close(burst)
	r.wg.Wait()
	n := r.returns.Load()
	if n < 2 || n > 3 {
		t.Fatalf("%d returns for 51 requests, want 2 (or 3 when a request raced the first's end)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*waits) == 0 {
		t.Fatal("the second return did not wait out the interval")
	}
	for _, w := range *waits {
		if w <= 0 || w > returnInterval {
			t.Errorf("waited %v, want within (0, %v]", w, returnInterval)
		}
	}
}

// TestMemReturnerTrimsPool: a return empties the buffer pool of the
// server's allocator.
func TestMemReturnerTrimsPool(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	pool := vector.NewPoolAllocator(checked, 0)
	for range 4 {
		pool.Free(pool.Allocate(1 << 20))
	}
	if pool.Retained() == 0 {
		t.Fatal("the pool kept nothing: the test cannot tell a trim")
	}
	r, _, _ := fakeReturner(1, pool)
	r.released(1)
	r.wg.Wait()
	if got := pool.Retained(); got != 0 {
		t.Fatalf("the pool keeps %d bytes after a return", got)
	}
	checked.AssertSize(t, 0)
}

// TestQueryAllocatorReportsFrees: a query allocator tells the returner
// what it frees.
func TestQueryAllocatorReportsFrees(t *testing.T) {
	r, _, _ := fakeReturner(1<<20, nil)
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	a := newQueryAllocator(checked, 0)
	a.ret = r
	b := a.Allocate(2 << 20)
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns before anything was freed", n)
	}
	a.Free(b)
	r.wg.Wait()
	// The free both crosses the threshold and drains the query (two
	// requests): one return serves both when the second comes before the
	// returner took the first, else a second return follows the interval.
	if n := r.returns.Load(); n < 1 || n > 2 {
		t.Fatalf("%d returns after freeing 2 MiB past a 1 MiB threshold, want 1 (or 2)", n)
	}
	checked.AssertSize(t, 0)
}

// TestQueryAllocatorDrained: a query that held more than the threshold
// asks for a return when it is back at zero, not before; a small query
// does not.
func TestQueryAllocatorDrained(t *testing.T) {
	r, _, _ := fakeReturner(4<<20, nil)
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	small := newQueryAllocator(checked, 0)
	small.ret = r
	small.Free(small.Allocate(1 << 20))
	r.wg.Wait()
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns after a 1 MiB query", n)
	}
	big := newQueryAllocator(checked, 0)
	big.ret = r
	if err := big.Reserve(3 << 20); err != nil {
		t.Fatal(err)
	}
	b := big.Allocate(2 << 20)
	big.Free(b) // 3 MiB still reserved: not drained; 3 MiB freed in all
	r.wg.Wait()
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns while the query still holds memory", n)
	}
	if err := big.Reserve(-3 << 20); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if n := r.returns.Load(); n != 1 {
		t.Fatalf("%d returns after a 5 MiB query drained, want 1", n)
	}
	checked.AssertSize(t, 0)
}

// TestQueryAllocatorDrainedAfterLimit: a query stopped by its memory
// limit asks for a return when it is back at zero although it never held
// the threshold (under a limit no larger than the threshold it cannot:
// the defaults are equal), once it held a quarter of it; the same query
// not stopped by a limit does not ask, nor does a tiny one that was.
func TestQueryAllocatorDrainedAfterLimit(t *testing.T) {
	r, _, _ := fakeReturner(8<<20, nil)
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	run := func(limit int64, hold, refused int) {
		a := newQueryAllocator(checked, limit)
		a.ret = r
		a.cancel = func(error) {}
		if err := a.Reserve(int64(hold)); err != nil {
			t.Fatal(err)
		}
		if refused > 0 {
			if err := a.Reserve(int64(refused)); err == nil {
				t.Fatalf("a reservation of %d bytes over a limit of %d was granted", refused, limit)
			}
		}
		if err := a.Reserve(-int64(hold)); err != nil {
			t.Fatal(err)
		}
		r.wg.Wait()
	}
	run(8<<20, 3<<20, 0) // 3 MiB of an 8 MiB threshold, no limit hit
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns after a 3 MiB query that succeeded", n)
	}
	run(1<<20, 1<<19, 1<<20) // stopped by a 1 MiB limit holding 512 KiB
	if n := r.returns.Load(); n != 0 {
		t.Fatalf("%d returns after a 512 KiB query stopped by its limit", n)
	}
	run(8<<20, 3<<20, 6<<20) // stopped by an 8 MiB limit holding 3 MiB
	if n := r.returns.Load(); n != 1 {
		t.Fatalf("%d returns after a 3 MiB query stopped by its limit, want 1", n)
	}
	checked.AssertSize(t, 0)
}
