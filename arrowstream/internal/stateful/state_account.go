package stateful

import (
	"fmt"
	"strings"

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
// set after each change of the state within an epoch. A refused
// reservation stops the query (the allocator cancels it with its limit's
// error, naming the operator); set returns the error so that the epoch
// fails before its state is committed. Over an allocator that enforces
// nothing the account only counts.
//
// One goroutine uses an account at a time (the operator's epoch loop).
type stateAccount struct {
	r    vector.MemoryReserver
	what string // the operator's state, for errors
	held int64
}

// newStateAccount returns the account of the state named what (e.g.
// "stream-stream join state"), reserving through mem labelled with what.
func newStateAccount(mem memory.Allocator, what string) stateAccount {
	r, _ := vector.ForOperator(mem, what).(vector.MemoryReserver)
	return stateAccount{r: r, what: what}
}

// set makes the reservation n bytes (growing or shrinking it). On error
// the reservation is unchanged.
func (a *stateAccount) set(n int64) error {
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

// bytes is what the account holds.
func (a *stateAccount) bytes() int64 { return a.held }

// release returns everything reserved (the state was dropped or the
// query stopped).
func (a *stateAccount) release() {
	if a.r != nil && a.held != 0 {
		_ = a.r.Reserve(-a.held)
	}
	a.held = 0
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
// operator's state stores hold decoded between epochs (the memory
// provider's map of a partition not in changelog mode: the session
// window's sessions, the streaming limit's count, a spilled state's
// keys), which the engine learns after each commit.
type StoreAccount struct{ a stateAccount }

// storeEntryOverhead approximates a store entry's memory besides its key
// and value bytes (the map slot, the key's string and the value's slice
// headers, allocation rounding).
const storeEntryOverhead = 80

// NewStoreAccount returns the account of the stores of the operator that
// declared d over mem.
func NewStoreAccount(mem memory.Allocator, d StateDecl) *StoreAccount {
	kind, _, _ := strings.Cut(d.Schema, " ")
	kind, _, _ = strings.Cut(kind, "(")
	return &StoreAccount{a: newStateAccount(mem, fmt.Sprintf("state store of stateful operator %d (%s)", d.OpID, kind))}
}

// StoreMetric is the custom progress metric that reports what an
// operator's StoreAccount holds.
const StoreMetric = "stateStoreBytesReserved"

// Set makes the reservation the stores' memory: keyValueBytes of keys and
// values in rows entries (0 bytes: the stores hold nothing decoded, the
// operator's live state does). A refusal stops the query through its
// allocator and is returned.
func (s *StoreAccount) Set(keyValueBytes, rows int64) error {
	n := keyValueBytes
	if n > 0 {
		n += rows * storeEntryOverhead
	}
	return s.a.set(n)
}

// Bytes is what the account holds.
func (s *StoreAccount) Bytes() int64 { return s.a.bytes() }

// Release returns the reservation (the stores were closed).
func (s *StoreAccount) Release() { s.a.release() }
