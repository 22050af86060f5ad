package server

import (
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReturnMemoryBytes is Limits.ReturnMemoryBytes when unset.
const DefaultReturnMemoryBytes = 64 << 20

// returnInterval is the least time between two returns of memory to the
// OS: each is a full GC plus a scavenge, too costly to run per statement.
const returnInterval = time.Second

// pooled is an allocator that keeps freed buffers (vector.PoolAllocator):
// trimming it lets the buffers it keeps go back to the OS too.
type pooled interface {
	Retained() int
	Close()
}

// memReturner returns memory to the OS after large releases. Go's runtime
// gives freed heap pages back only gradually (its background scavenger),
// so after a large query or table is released the process's resident set
// stays hundreds of MiB high for minutes (bench/retain, BenchmarkReleaseQuery).
// Once the queries have freed more than threshold bytes (counted by their
// accounting allocators), or a table was dropped, a goroutine off the
// request path trims the session's buffer pool and runs
// debug.FreeOSMemory, at most once per returnInterval. It holds no
// goroutine while idle.
type memReturner struct {
	threshold int64  // <= 0: never
	pool      pooled // nil: the allocator keeps nothing
	log       *slog.Logger
	free      func()         // debug.FreeOSMemory; tests replace it
	freed     atomic.Int64   // bytes released since the last return
	pending   atomic.Bool    // a return was asked for
	running   atomic.Bool    // the goroutine runs
	mu        sync.Mutex     // guards last
	last      time.Time      // when memory was last returned
	returns   atomic.Int64   // returns done (tests, logs)
	wg        sync.WaitGroup // the goroutine (tests wait on it)
	sleep     func(time.Duration)
	// done is closed by stop: the goroutine's wait ends and no new one
	// starts, so that a stopped server leaves no goroutine behind (it
	// could sleep out the rest of returnInterval after the server's
	// Stop returned).
	done chan struct{}
	// startMu orders starting the goroutine (wg.Add) against stop's
	// close and wg.Wait.
	startMu sync.Mutex
}

func newMemReturner(threshold int64, alloc any, log *slog.Logger) *memReturner {
	r := &memReturner{threshold: threshold, log: log, free: debug.FreeOSMemory, done: make(chan struct{})}
	r.sleep = r.wait
	if p, ok := alloc.(pooled); ok {
		r.pool = p
	}
	return r
}

// released counts n bytes a query freed; past the threshold it asks for a
// return.
func (r *memReturner) released(n int64) {
	if r == nil || r.threshold <= 0 || n <= 0 {
		return
	}
	if r.freed.Add(n) >= r.threshold {
		r.freed.Store(0)
		r.request()
	}
}

// drained is called when a query's allocator is back at zero after
// holding at most peak bytes: a query that held more than the threshold
// asks for a return, now that its buffers and operators are released
// (a return in the middle of the release, from released, leaves the rest
// of it in the process). So does one stopped by a memory limit (limitHit)
// that held a quarter of the threshold: its peak counts what it was
// granted, not the allocation that was refused nor the garbage it left on
// the Go heap, so under a query limit no larger than the threshold (the
// defaults are equal) a failed query would never ask, and its memory
// stayed resident until the runtime's scavenger got to it (70 s after a
// failed cross join under 64 MiB). A failure is not steady state: the
// extra return costs nothing while queries succeed.
func (r *memReturner) drained(peak int64, limitHit bool) {
	if r == nil || r.threshold <= 0 {
		return
	}
	if peak >= r.threshold || limitHit && peak >= r.threshold/4 {
		r.request()
	}
}

// dropped is called after a table was dropped: its buffers (not counted
// by any query allocator) are free once collected.
func (r *memReturner) dropped() {
	if r == nil || r.threshold <= 0 {
		return
	}
	r.request()
}

// wait sleeps d or until stop.
func (r *memReturner) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.done:
	}
}

// stopped reports whether stop was called.
func (r *memReturner) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// stop ends the goroutine (its wait is cut short, the return it waited
// for is skipped) and waits for it; later requests are ignored. The
// server's Stop calls it.
func (r *memReturner) stop() {
	if r == nil {
		return
	}
	r.startMu.Lock()
	if !r.stopped() {
		close(r.done)
	}
	r.startMu.Unlock()
	r.wg.Wait()
}

// request asks for a return and starts the goroutine unless it runs; it
// never blocks.
func (r *memReturner) request() {
	r.pending.Store(true)
	if !r.running.CompareAndSwap(false, true) {
		return
	}
	r.startMu.Lock()
	defer r.startMu.Unlock()
	if r.stopped() {
		r.running.Store(false)
		return
	}
	r.wg.Add(1)
	go r.loop()
}

// loop serves the requests, waiting out the interval since the last
// return, until none is pending.
func (r *memReturner) loop() {
	defer r.wg.Done()
	for {
		for r.pending.Swap(false) {
			r.mu.Lock()
			wait := returnInterval - time.Since(r.last)
			first := r.last.IsZero()
			r.mu.Unlock()
			if !first && wait > 0 {
				r.sleep(wait)
				r.pending.Store(false) // this return serves the requests made meanwhile
			}
			if r.stopped() {
				r.running.Store(false)
				return
			}
			r.returnNow()
		}
		r.running.Store(false)
		// A request that came after the Swap but saw running true is
		// served here.
		if !r.pending.Load() || !r.running.CompareAndSwap(false, true) {
			return
		}
	}
}

func (r *memReturner) returnNow() {
	var trimmed int
	if r.pool != nil {
		trimmed = r.pool.Retained()
		r.pool.Close()
		// The pool unmaps large buffers on a goroutine of its own: wait
		// for them, so that the return (and its log line) comes after
		// the memory left the process.
		if w, ok := r.pool.(interface{ WaitUnmapped() }); ok {
			w.WaitUnmapped()
		}
	}
	r.free()
	r.mu.Lock()
	r.last = time.Now()
	r.mu.Unlock()
	r.returns.Add(1)
	if r.log != nil {
		r.log.Debug("returned free memory to the OS", "pool_trimmed_bytes", trimmed)
	}
}
