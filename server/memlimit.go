package server

import (
	"cmp"
	"fmt"
	"maps"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// MemoryLimitError reports a query that went over the per-query memory
// limit or took the server over its process-wide limit. The server
// answers it with ResourceExhausted.
//
// How a query meets it: an operator that reserves Go-heap memory (hash
// tables, sort permutations; vector.MemoryReserver) gets it as an error
// and fails. An Arrow allocation cannot fail (memory.Allocator returns no
// error), so the first one over the limit is granted and cancels the
// query's context with this error as the cause; every operator checks its
// context at bounded intervals, so the query stops, closes its operators
// and releases everything. Only an allocation that would take the query
// past twice its limit (one huge buffer) panics with it; the server
// recovers the panic on its goroutines.
type MemoryLimitError struct {
	// Scope is "query" (Limits.QueryMemoryBytes) or "server"
	// (Limits.ServerMemoryBytes).
	Scope string
	// Limit is the limit in bytes.
	Limit int64
	// Requested is the size of the allocation that failed.
	Requested int64
	// InUse is what the query (Scope "query") or all queries (Scope
	// "server") held when it failed.
	InUse int64
	// Operator names the operator that allocated, when known.
	Operator string
	// Streaming: the query is a streaming table's. Its failure is
	// permanent (stream.ErrPermanent): a restart policy does not restart
	// it, since the restarted query would rebuild the same state from its
	// checkpoint and replay the same epochs into the same limit.
	Streaming bool
	// Holders names the operators holding the largest Go-heap
	// reservations of the query when it failed (a streaming table's
	// state, a hash table), at most three, largest first, with their
	// bytes: the allocation that breaks a limit is often not the one that
	// filled it.
	Holders []string
}

// Is makes a streaming table's limit error a permanent failure.
func (e *MemoryLimitError) Is(target error) bool {
	return e.Streaming && target == stream.ErrPermanent
}

func (e *MemoryLimitError) Error() string {
	op := ""
	if e.Operator != "" {
		op = " in " + e.Operator
	}
	note := ""
	if len(e.Holders) > 0 {
		note = "; the largest reservations: " + strings.Join(e.Holders, ", ")
	}
	if e.Streaming {
		note += "; the streaming table is not restarted (it would replay the same data into the same limit): raise the limit or bound the state (a watermark), then recreate the table"
	}
	if e.Scope == "server" {
		return fmt.Sprintf("RESOURCE_EXHAUSTED: query stopped: the server's memory limit of %d bytes (ServerMemoryBytes, --memory-limit) is reached (queries and shared state buffers hold %d, allocating %d more%s)%s", e.Limit, e.InUse, e.Requested, op, note)
	}
	return fmt.Sprintf("RESOURCE_EXHAUSTED: query exceeded its memory limit of %d bytes (QueryMemoryBytes; holding %d, allocating %d more%s)%s", e.Limit, e.InUse, e.Requested, op, note)
}

// memoryPool is the server-wide account: the bytes all running queries
// hold, against Limits.ServerMemoryBytes.
type memoryPool struct {
	limit int64 // 0: none
	inUse atomic.Int64
	// mapped returns the bytes the server's allocator holds outside the Go
	// heap (vector.MappedAllocator under the pool), nil when it maps none.
	mapped func() int64
	// reclaimed counts the queries whose allocator panicked past twice
	// their limit and were reclaimed (memlimit_registry.go).
	reclaimed atomic.Int64
	// shared returns the bytes of buffers every streaming table shares
	// and none accounts (checkpoint.SharedBufferBytes: the pooled state
	// encode scratch, the epoch logs' write buffers), counted against
	// the limit beside the queries' bytes.
	shared func() int64
}

// newMemoryPool returns the pool for a server whose allocator is alloc.
func newMemoryPool(limit int64, alloc any) *memoryPool {
	p := &memoryPool{limit: limit, shared: checkpoint.SharedBufferBytes}
	if m, ok := alloc.(interface{ MappedBytes() int64 }); ok {
		p.mapped = m.MappedBytes
	}
	return p
}

// processHeapBytes is the memory the Go heap holds for live and unswept
// objects (Arrow's Go allocator allocates there too).
func processHeapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// processBytes is the Go heap and the large buffers mapped outside it.
func (p *memoryPool) processBytes() int64 {
	n := processHeapBytes()
	if p.mapped != nil {
		n += p.mapped()
	}
	return n
}

// sharedBytes is what the shared buffers hold (0: none counted).
func (p *memoryPool) sharedBytes() int64 {
	if p == nil || p.shared == nil {
		return 0
	}
	return p.shared()
}

// admit refuses new work when the process is at its memory limit: the
// queries' accounted bytes with the shared buffers, or the whole heap
// with the large buffers mapped outside it (tables, state, ingest), at or
// past the limit.
func (p *memoryPool) admit() error {
	if p == nil || p.limit <= 0 {
		return nil
	}
	held, heap := p.inUse.Load()+p.sharedBytes(), p.processBytes()
	if held >= p.limit || heap >= p.limit {
		return statusf(codes.ResourceExhausted, "RESOURCE_EXHAUSTED: the server is at its memory limit of %d bytes (ServerMemoryBytes, --memory-limit; queries and shared state buffers hold %d, the heap and mapped buffers %d): new queries and ingest are refused until memory is freed; retry later", p.limit, held, heap)
	}
	return nil
}

// queryAllocator counts the bytes one query holds and enforces its limit
// (0: count only) and the server's. It is safe for concurrent use.
type queryAllocator struct {
	parent memory.Allocator
	limit  int64
	pool   *memoryPool       // nil: no server-wide limit
	cancel func(cause error) // stops the query (nil: none)
	inUse  atomic.Int64
	peak   atomic.Int64
	trip   sync.Once
	err    atomic.Pointer[MemoryLimitError] // the first limit hit
	// noPanic grants even an allocation past twice the limit (stopping
	// the query): a streaming query allocates on goroutines the server
	// does not guard.
	noPanic bool
	// streaming marks the limit errors of a streaming table's allocator
	// (MemoryLimitError.Streaming).
	streaming bool
	// ret hears of the bytes freed, to return memory to the OS after
	// large releases (nil: no one).
	ret *memReturner
	// mu guards live: the Arrow buffers the query holds, by first byte,
	// so that a query whose limit panicked can be reclaimed
	// (memlimit_registry.go).
	mu   sync.Mutex
	live map[*byte][]byte
	// panicked is set when an allocation panicked over the limit.
	panicked atomic.Bool
	// kept counts the long-lived buffers allocated through Underlying
	// (not registered: they may outlive the query in a sink).
	kept atomic.Int64
	// borrows makes Borrow keep the table records the query's scans read
	// until endQuery (memlimit_borrow.go); mu guards borrowed.
	borrows  bool
	borrowed []arrow.Record
	// resMu guards reserved: the Go-heap bytes each operator holds
	// reserved (Reserve, by operator label), to name the largest in a
	// limit error. Updated on reservations only, not on Arrow
	// allocations.
	resMu    sync.Mutex
	reserved map[string]int64
	// label names, in limit errors, what allocates or reserves through
	// the query's allocator without an operator's label (ForOperator):
	// the buffers of a query outside its plan's operators, so that no
	// error says "an unnamed operator".
	label string
}

// Default labels of allocations made without an operator's label.
const (
	batchQueryLabel     = "the query's result stream and buffers outside its operators"
	streamingQueryLabel = "streaming table %s (its sources, sink and epoch buffers outside its operators)"
)

// opName is op, or the allocator's label when op is empty.
func (a *queryAllocator) opName(op string) string {
	if op == "" {
		if a.label != "" {
			return a.label
		}
		return "an unnamed operator"
	}
	return op
}

var (
	_ memory.Allocator       = (*queryAllocator)(nil)
	_ vector.MemoryReserver  = (*queryAllocator)(nil)
	_ vector.OperatorLabeler = (*queryAllocator)(nil)
)

func newQueryAllocator(parent memory.Allocator, limit int64) *queryAllocator {
	return &queryAllocator{parent: parent, limit: limit}
}

// over returns the limit that n more bytes (now the query's total after
// adding them) break, or nil.
func (a *queryAllocator) over(n, now, pooled int64, op string) *MemoryLimitError {
	if n <= 0 {
		return nil
	}
	var e *MemoryLimitError
	if a.limit > 0 && now > a.limit {
		e = &MemoryLimitError{Scope: "query", Limit: a.limit, Requested: n, InUse: now - n, Operator: op, Streaming: a.streaming}
	} else if a.pool != nil && a.pool.limit > 0 && pooled+a.pool.sharedBytes() > a.pool.limit {
		e = &MemoryLimitError{Scope: "server", Limit: a.pool.limit, Requested: n, InUse: pooled + a.pool.sharedBytes() - n, Operator: op, Streaming: a.streaming}
	} else {
		return nil
	}
	e.Holders = a.largestReservations(3)
	return e
}

// noteReserved records that operator op now holds n more bytes reserved.
func (a *queryAllocator) noteReserved(op string, n int64) {
	op = a.opName(op)
	a.resMu.Lock()
	defer a.resMu.Unlock()
	if a.reserved == nil {
		a.reserved = map[string]int64{}
	}
	if v := a.reserved[op] + n; v > 0 {
		a.reserved[op] = v
	} else {
		delete(a.reserved, op)
	}
}

// largestReservations describes the n operators holding the most
// reserved bytes ("N bytes by op"), largest first.
func (a *queryAllocator) largestReservations(n int) []string {
	a.resMu.Lock()
	ops := make([]string, 0, len(a.reserved))
	for k := range a.reserved {
		ops = append(ops, k)
	}
	held := maps.Clone(a.reserved)
	a.resMu.Unlock()
	slices.SortFunc(ops, func(x, y string) int {
		if c := cmp.Compare(held[y], held[x]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	out := make([]string, 0, n)
	for _, op := range ops[:min(n, len(ops))] {
		out = append(out, fmt.Sprintf("%d bytes by %s", held[op], op))
	}
	return out
}

// add accounts n bytes (negative: freed) and returns the limit broken.
// The caller keeps the bytes (notePeak) or gives them back (undo).
func (a *queryAllocator) add(n int64, op string) *MemoryLimitError {
	now := a.inUse.Add(n)
	var pooled int64
	if a.pool != nil {
		pooled = a.pool.inUse.Add(n)
	}
	if n < 0 && now == 0 {
		// The query released all it held: if that was much, or it was
		// stopped by a limit, the memory is free to return now (its
		// operators have closed).
		a.ret.drained(a.peak.Load(), a.err.Load() != nil)
	}
	return a.over(n, now, pooled, op)
}

// notePeak records the query's current holding in its peak.
func (a *queryAllocator) notePeak() {
	now := a.inUse.Load()
	for {
		p := a.peak.Load()
		if now <= p || a.peak.CompareAndSwap(p, now) {
			return
		}
	}
}

func (a *queryAllocator) undo(n int64) {
	a.inUse.Add(-n)
	if a.pool != nil {
		a.pool.inUse.Add(-n)
	}
}

// stop records the first limit hit and cancels the query with it.
func (a *queryAllocator) stop(e *MemoryLimitError) {
	a.trip.Do(func() {
		a.err.Store(e)
		if a.cancel != nil {
			a.cancel(e)
		}
	})
}

// limitErr is the limit the query hit, or nil.
func (a *queryAllocator) limitErr() error {
	if e := a.err.Load(); e != nil {
		return e
	}
	return nil
}

// allocation accounts an Arrow allocation of n bytes (see
// MemoryLimitError for why it is granted over the limit).
func (a *queryAllocator) allocation(n int64, op string) {
	e := a.add(n, a.opName(op))
	if e == nil {
		a.notePeak()
		return
	}
	if !a.noPanic && (e.Scope == "query" && a.inUse.Load() > 2*a.limit || e.Scope == "server" && a.pool.inUse.Load() > a.pool.limit+a.pool.limit/4) {
		a.undo(n)
		a.stop(e)
		a.panicked.Store(true)
		panic(e)
	}
	a.notePeak()
	a.stop(e)
}

// Reserve implements vector.MemoryReserver: Go-heap memory of operators.
func (a *queryAllocator) Reserve(n int64) error { return a.reserveFor(n, "") }

func (a *queryAllocator) reserveFor(n int64, op string) error {
	if e := a.add(n, a.opName(op)); e != nil {
		a.undo(n)
		a.stop(e)
		return e
	}
	a.noteReserved(op, n)
	a.notePeak()
	return nil
}

// MemoryLimit is the limit the query's memory counts against: the
// smaller of its own and the server's (0: none). Streaming operators
// bound the growth they reserve a chunk at a time by it
// (arrowstream/internal/stateful growthMeter).
func (a *queryAllocator) MemoryLimit() int64 {
	l := a.limit
	if a.pool != nil && a.pool.limit > 0 && (l <= 0 || a.pool.limit < l) {
		l = a.pool.limit
	}
	return max(l, 0)
}

// Allocate implements memory.Allocator.
func (a *queryAllocator) Allocate(size int) []byte { return a.allocate(size, "") }

func (a *queryAllocator) allocate(size int, op string) []byte {
	a.allocation(int64(size), op)
	b := a.parent.Allocate(size)
	a.track(b)
	return b
}

// Reallocate implements memory.Allocator.
func (a *queryAllocator) Reallocate(size int, b []byte) []byte { return a.reallocate(size, b, "") }

func (a *queryAllocator) reallocate(size int, b []byte, op string) []byte {
	a.allocation(int64(size-len(b)), op) // a panic leaves b registered: its owner still holds it
	a.untrack(b)
	nb := a.parent.Reallocate(size, b)
	a.track(nb)
	return nb
}

// Free implements memory.Allocator.
func (a *queryAllocator) Free(b []byte) {
	n := a.untrack(b)
	// Freed before it is accounted, so that a drained query's last
	// buffer is in the pool when the returner trims it.
	a.parent.Free(b)
	a.add(-n, "")
	a.ret.released(n)
}

// ForOperator implements vector.OperatorLabeler.
func (a *queryAllocator) ForOperator(name string) memory.Allocator {
	return &operatorAllocator{a: a, op: name}
}

// operatorAllocator is a query's allocator as one operator uses it, so
// that a limit error names the operator.
type operatorAllocator struct {
	a  *queryAllocator
	op string
}

var (
	_ memory.Allocator       = (*operatorAllocator)(nil)
	_ vector.MemoryReserver  = (*operatorAllocator)(nil)
	_ vector.OperatorLabeler = (*operatorAllocator)(nil)
)

func (o *operatorAllocator) Allocate(size int) []byte { return o.a.allocate(size, o.op) }

func (o *operatorAllocator) Reallocate(size int, b []byte) []byte {
	return o.a.reallocate(size, b, o.op)
}

func (o *operatorAllocator) Free(b []byte) { o.a.Free(b) }

func (o *operatorAllocator) Reserve(n int64) error { return o.a.reserveFor(n, o.op) }

// MemoryLimit is the query's (queryAllocator.MemoryLimit).
func (o *operatorAllocator) MemoryLimit() int64 { return o.a.MemoryLimit() }

func (o *operatorAllocator) ForOperator(name string) memory.Allocator {
	return &operatorAllocator{a: o.a, op: name}
}
