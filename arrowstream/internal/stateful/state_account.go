package stateful

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// stateAccount reserves the Go-heap bytes of an operator's live state
// (maps, key indexes, decoded rows kept between epochs) against the
// query's allocator when it enforces a limit (vector.MemoryReserver: a
// streaming table started through a server), the same account its Arrow
// buffers count in, so that the table's memory limit bounds both.
//
// The operator keeps a running estimate of its structures' sizes (updated
// where they grow and shrink, never a scan of the rows) and hands it to
// set after each change of the state within an epoch. While an epoch
// adds to the state, each partition's growthMeter reserves the growth as
// it happens, a chunk at a time (grow), so that one epoch's growth cannot
// pass the limit by more than the partitions' unreserved chunks before it
// is refused; set at the epoch's end makes the reservation the estimate
// again (returning what was reserved ahead for state that was evicted). A
// refused reservation stops the query (the allocator cancels it with its
// limit's error, naming the operator); set and grow return the error so
// that the epoch fails before its state is committed. Over an allocator
// that enforces nothing the account only counts.
//
// set and release are called by the operator's epoch loop; grow also by
// its partitions running in parallel (mu orders them).
type stateAccount struct {
	r    vector.MemoryReserver
	what string // the operator's state, for errors
	mu   *sync.Mutex
	held int64
	// limit is the limit the reservations count against (0: none
	// known), which bounds the growth reserved a chunk at a time
	// (growthMeter).
	limit int64
}

// memoryLimiter is implemented by an accounting allocator that can tell
// the limit its reservations count against (the server's query
// allocator: the smaller of the query's and the server's limit).
type memoryLimiter interface {
	MemoryLimit() int64
}

// newStateAccount returns the account of the state named what (e.g.
// "stream-stream join state"), reserving through mem labelled with what.
func newStateAccount(mem memory.Allocator, what string) stateAccount {
	labelled := vector.ForOperator(mem, what)
	r, _ := labelled.(vector.MemoryReserver)
	var limit int64
	if l, ok := labelled.(memoryLimiter); ok {
		limit = max(l.MemoryLimit(), 0)
	}
	return stateAccount{r: r, what: what, mu: new(sync.Mutex), limit: limit}
}

// lock takes the account's mutex (an account built as a literal in a
// test has none and is used by one goroutine); unlock releases it. A pair
// of methods, not a returned unlock function: the method value
// (a.mu.Unlock) was an allocation per call, a few per epoch.
func (a *stateAccount) lock() {
	if a.mu != nil {
		a.mu.Lock()
	}
}

func (a *stateAccount) unlock() {
	if a.mu != nil {
		a.mu.Unlock()
	}
}

// set makes the reservation n bytes (growing or shrinking it). On error
// the reservation is unchanged.
func (a *stateAccount) set(n int64) error {
	a.lock()
	defer a.unlock()
	n = max(n, 0)
	delta := n - a.held
	if delta == 0 {
		return nil
	}
	if a.r != nil {
		if err := a.r.Reserve(delta); err != nil {
			return fmt.Errorf("arrowstream: %s would grow to %d bytes: %w", a.what, n, err)
		}
	}
	a.held = n
	return nil
}

// grow reserves delta more bytes (the state grew within an epoch; set at
// its end trues the reservation up). On error the reservation is
// unchanged.
func (a *stateAccount) grow(delta int64) error {
	if delta <= 0 {
		return nil
	}
	a.lock()
	defer a.unlock()
	if a.r != nil {
		if err := a.r.Reserve(delta); err != nil {
			return fmt.Errorf("arrowstream: %s would grow to %d bytes within the epoch: %w", a.what, a.held+delta, err)
		}
	}
	a.held += delta
	return nil
}

// shrink returns up to n bytes of the reservation.
func (a *stateAccount) shrink(n int64) {
	a.lock()
	defer a.unlock()
	n = min(n, a.held)
	if n <= 0 {
		return
	}
	if a.r != nil {
		_ = a.r.Reserve(-n)
	}
	a.held -= n
}

// bytes is what the account holds.
func (a *stateAccount) bytes() int64 {
	a.lock()
	defer a.unlock()
	return a.held
}

// release returns everything reserved (the state was dropped or the
// query stopped).
func (a *stateAccount) release() {
	a.lock()
	defer a.unlock()
	if a.r != nil && a.held != 0 {
		_ = a.r.Reserve(-a.held)
	}
	a.held = 0
}

// growthChunk is how much of an operator's state may grow within an epoch
// before it is reserved, split over its partitions (growthMeter); every
// partition reserves at least minGrowthChunk at a time so that the hot
// path stays a comparison. Under a known limit a partition's chunk is
// also at most limit/(4×partitions) (but not below floorGrowthChunk), so
// that a small limit with many partitions is not passed by the chunks:
// an operator's growth unreserved is at most the smaller of the larger of
// growthChunk and minGrowthChunk a partition (200 partitions: 12.5 MiB)
// and a quarter of the limit, or floorGrowthChunk a partition when that
// is more (growthSlack).
const (
	growthChunk      = 1 << 20
	minGrowthChunk   = 64 << 10
	floorGrowthChunk = 1 << 10
)

// growthChunkFor is the chunk of each of parts partitions under limit
// (0: none known).
func growthChunkFor(limit int64, parts int) int64 {
	parts = max(parts, 1)
	c := max(growthChunk/int64(parts), minGrowthChunk)
	if limit > 0 {
		c = min(c, max(limit/(4*int64(parts)), floorGrowthChunk))
	}
	return c
}

// growthSlack is the most an operator of parts partitions may hold
// unreserved within an epoch under limit: a chunk a partition.
func growthSlack(limit int64, parts int) int64 {
	return growthChunkFor(limit, parts) * int64(max(parts, 1))
}

// growthMeter reserves on an account the growth of one partition's state
// estimate within an epoch, each time it has grown by a chunk since the
// last reservation. A partition's loop calls note with its estimate after
// each addition (a comparison unless a chunk is due). One goroutine uses
// a meter.
type growthMeter struct {
	acct  *stateAccount
	mark  int64 // the estimate when the last chunk was reserved
	chunk int64
}

// newGrowthMeter returns the meter of a partition whose estimate is est
// now, on acct, for an operator of parts partitions.
func newGrowthMeter(acct *stateAccount, est int64, parts int) growthMeter {
	return growthMeter{acct: acct, mark: est, chunk: growthChunkFor(acct.limit, parts)}
}

// note is called with the partition's estimate after it changed; it
// reserves the growth since the last reservation once that is a chunk.
func (m *growthMeter) note(est int64) error {
	if est-m.mark < m.chunk {
		if est < m.mark {
			m.mark = est // shrank (an eviction): grow from here
		}
		return nil
	}
	return m.reserve(est)
}

// grown is note for an estimate that leaves out memory reserved ahead
// of it (candidate rows reserved before they are built, then counted in
// the estimate as the state takes them): it reserves only past the
// highest mark reached, never lowering it.
func (m *growthMeter) grown(est int64) error {
	if est-m.mark < m.chunk {
		return nil
	}
	return m.reserve(est)
}

func (m *growthMeter) reserve(est int64) error {
	if err := m.acct.grow(est - m.mark); err != nil {
		return err
	}
	m.mark = est
	return nil
}

// heapMetric is the custom progress metric that reports what an
// operator's state account holds: the Go-heap part of memoryUsedBytes
// that counts against the table's memory limit (the Arrow buffers of the
// state count there through the allocator itself).
const heapMetric = "stateHeapBytesReserved"

// report adds the account's bytes to a progress report's custom
// metrics.
func (a *stateAccount) report(m *map[string]int64) {
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[heapMetric] = a.held
}

// StoreAccount reserves, against the query's limit, the memory an
// operator's state stores hold between epochs (the memory provider's map
// of a partition not in changelog mode: the session window's sessions,
// the streaming limit's count, a spilled state's keys; and the changelog
// encode arenas the partitions keep for their next epochs), which the
// engine learns after each commit.
type StoreAccount struct{ a stateAccount }

// storeEntryOverhead approximates a store entry's memory besides its key
// and value bytes (the map slot, the key's string and the value's slice
// headers, allocation rounding).
const storeEntryOverhead = 80

// NewStoreAccount returns the account of the stores of the operator that
// declared d over mem.
func NewStoreAccount(mem memory.Allocator, d StateDecl) *StoreAccount {
	return &StoreAccount{a: newStateAccount(mem, storeAccountName(d))}
}

// storeAccountName names the stores of the operator that declared d.
func storeAccountName(d StateDecl) string {
	kind, _, _ := strings.Cut(d.Schema, " ")
	kind, _, _ = strings.Cut(kind, "(")
	return fmt.Sprintf("state store of stateful operator %d (%s)", d.OpID, kind)
}

// NewStoreEpochAccount returns the account of what an epoch writes into
// the stores of the operator that declared d while they hold it
// (checkpoint.EpochBufferPartition), named "state store of stateful
// operator N (kind), the epoch's writes".
func NewStoreEpochAccount(mem memory.Allocator, d StateDecl) *StoreAccount {
	return &StoreAccount{a: newStateAccount(mem, storeAccountName(d)+", the epoch's writes")}
}

// NewProviderAccount returns the account of the memory a state store
// provider shares between an operator's partitions (the Pebble block
// cache), named "state store provider <name> (<what>)".
func NewProviderAccount(mem memory.Allocator, name, what string) *StoreAccount {
	return &StoreAccount{a: newStateAccount(mem, fmt.Sprintf("state store provider %s (%s)", name, what))}
}

// SetFixed makes the reservation n bytes: a bound from the provider's
// settings (checkpoint.BoundedProvider), not what the state holds.
func (s *StoreAccount) SetFixed(n int64) error { return s.a.set(n) }

// StoreMetric is the custom progress metric that reports what an
// operator's StoreAccount holds.
const StoreMetric = "stateStoreBytesReserved"

// Set makes the reservation the stores' memory: keyValueBytes of keys and
// values in rows entries (0 bytes: the stores hold nothing decoded, the
// operator's live state does), and buffers bytes of buffers kept between
// epochs (checkpoint.BufferedPartition). A refusal stops the query
// through its allocator and is returned.
func (s *StoreAccount) Set(keyValueBytes, rows, buffers int64) error {
	n := keyValueBytes
	if n > 0 {
		n += rows * storeEntryOverhead
	}
	return s.a.set(n + max(buffers, 0))
}

// Add reserves delta more bytes, or returns -delta bytes when it is
// negative: memory the stores hold while an epoch fills them
// (checkpoint.EpochBufferPartition). It is safe
// for concurrent use by the partitions' stores. A refusal stops the query
// through its allocator and is returned.
func (s *StoreAccount) Add(delta int64) error {
	if delta < 0 {
		s.a.shrink(-delta)
		return nil
	}
	return s.a.grow(delta)
}

// Bytes is what the account holds.
func (s *StoreAccount) Bytes() int64 { return s.a.bytes() }

// Release returns the reservation (the stores were closed).
func (s *StoreAccount) Release() { s.a.release() }

// viewAccount reserves, on the table's account, the Go-heap memory of
// the live snapshot views an operator hands its stores' background
// maintenance (live_snapshot.go), from when a view holds it until the
// maintenance releases the view, which may be epochs later. A refusal
// stops the query through its allocator, as the state's own accounts do.
type viewAccount struct {
	r    vector.MemoryReserver
	what string
}

// newViewAccount returns the account of the views of the state named
// what, reserving through mem labelled "live snapshot views of <what>".
func newViewAccount(mem memory.Allocator, what string) viewAccount {
	what = "live snapshot views of " + what
	r, _ := vector.ForOperator(mem, what).(vector.MemoryReserver)
	return viewAccount{r: r, what: what}
}

// viewHold is what one view holds reserved. add and release may be
// called from the maintenance's goroutines.
type viewHold struct {
	r    vector.MemoryReserver
	what string
	n    atomic.Int64
}

// hold returns a view's reservation of n bytes.
func (a viewAccount) hold(n int64) (*viewHold, error) {
	h := &viewHold{r: a.r, what: a.what}
	return h, h.add(n)
}

// add reserves n more bytes for the view. On error nothing is added.
func (h *viewHold) add(n int64) error {
	if h == nil || n <= 0 {
		return nil
	}
	if h.r != nil {
		if err := h.r.Reserve(n); err != nil {
			return fmt.Errorf("arrowstream: %s would grow by %d bytes: %w", h.what, n, err)
		}
	}
	h.n.Add(n)
	return nil
}

// bytes is what the view holds reserved.
func (h *viewHold) bytes() int64 {
	if h == nil {
		return 0
	}
	return h.n.Load()
}

// release returns the view's reservation (once: later calls return
// nothing).
func (h *viewHold) release() {
	if h == nil {
		return
	}
	if n := h.n.Swap(0); n != 0 && h.r != nil {
		_ = h.r.Reserve(-n)
	}
}
