package server

import (
	"unsafe"
)

// Reclaiming what a query leaked when its limit panicked.
//
// An Arrow allocation cannot fail, so an allocation that would take a
// query past twice its limit panics with its *MemoryLimitError (one huge
// buffer granted there could take the process down). The panic unwinds
// the kernel that allocated: buffers it held only in local variables (a
// string kernel's half-built output, an expanded constant, a builder's
// buffers) are never released, so they would stay counted against the
// query and the server, and a large one (mapped outside the Go heap by
// vector.MappedAllocator) would stay mapped for the life of the process.
//
// Three ways out were weighed:
//   - No panic at all (grant, cancel, and cap a single allocation): a
//     single request above the cap must still be refused, and a
//     memory.Allocator has no way to refuse but a panic.
//   - Every kernel releasing its locals on panic (deferred releases): the
//     allocations sit in hundreds of kernels and inside arrow-go's own
//     builders; no one place makes it hold, and each new kernel could
//     break it again.
//   - A registry of the query's live buffers (chosen): the query's
//     allocator records each Arrow buffer it hands out (one map entry per
//     buffer, not per row: a few per batch and column) and forgets it on
//     Free. When a query that panicked over its limit has ended (its
//     operators closed, its result stream closed), whatever is still
//     registered is referenced by no one but dead stack frames, and is
//     freed to the server's allocator; the bytes leave the query's and
//     the pool's accounts.
//
// Why nothing live can still hold a reclaimed buffer: a query's allocator
// serves one batch query (a DoGet statement, a DoGet of a table, a
// front-end Rows), which runs its operators on the goroutine that calls
// Next (the vector and plan packages start no goroutines for it). Its
// buffers reach only (1) the operators, closed before reclaim; (2) the
// result records, which the stream writes and releases one at a time: the
// Flight writer copies a record into its message before Send returns, and
// a front end (pgwire) releases its current record before it closes the
// Rows; (3) nothing else: commands (Exec: INSERT, CREATE TABLE AS, CACHE)
// are not given the query's allocator and so never panic in it, and the
// long-lived buffers of a streaming query's sink (Underlying) belong to an
// allocator that never panics (noPanic) and are not registered. Only a
// query whose allocator panicked is reclaimed; after a normal end the
// registry is empty anyway (and a leak is logged, not freed).

// track records b (from the parent) as a live buffer of the query.
func (a *queryAllocator) track(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := unsafe.SliceData(b)
	a.mu.Lock()
	if a.live == nil {
		a.live = make(map[*byte][]byte)
	}
	a.live[p] = b
	a.mu.Unlock()
}

// untrack forgets b and returns the size it was registered with (len(b)
// when it was not registered).
func (a *queryAllocator) untrack(b []byte) int64 {
	if cap(b) == 0 {
		return int64(len(b))
	}
	p := unsafe.SliceData(b)
	a.mu.Lock()
	r, ok := a.live[p]
	if ok {
		delete(a.live, p)
	}
	a.mu.Unlock()
	if ok {
		return int64(len(r))
	}
	return int64(len(b))
}

// liveBuffers is the number of buffers the query holds.
func (a *queryAllocator) liveBuffers() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.live)
}

// reclaim ends a query whose allocator panicked over its limit: it frees
// every buffer still registered and takes the query's remaining count
// (those buffers, and Go-heap reservations the panic left unreturned)
// out of the server's pool. It must be called once the query's operators
// and result stream are closed; it does nothing for a query that did not
// panic. It returns the bytes and buffers it freed.
func (a *queryAllocator) reclaim() (bytes int64, buffers int) {
	if !a.panicked.Load() || a.noPanic {
		return 0, 0
	}
	a.mu.Lock()
	live := a.live
	a.live = nil
	a.mu.Unlock()
	for _, b := range live {
		a.parent.Free(b)
		a.add(-int64(len(b)), "")
		a.ret.released(int64(len(b)))
		bytes += int64(len(b))
	}
	// What is left are reservations of Go-heap structures the unwound
	// frames held (the collector takes the memory back) and the
	// long-lived sink buffers of Underlying, which a panicking query has
	// none of.
	if rest := a.inUse.Load() - a.kept.Load(); rest > 0 {
		a.undo(rest)
		bytes += rest
	}
	return bytes, len(live)
}

// endQuery is called when a batch query has ended and its operators and
// result stream are closed: the table records it borrowed are released,
// and a query that panicked over its limit is reclaimed (the pool counts
// it).
func (s *Server) endQuery(a *queryAllocator) {
	a.releaseBorrowed()
	if !a.panicked.Load() {
		return
	}
	n, bufs := a.reclaim()
	s.pool.reclaimed.Add(1)
	s.log.Info("freed what a query left allocated when its memory limit panicked", "bytes", n, "buffers", bufs)
}
