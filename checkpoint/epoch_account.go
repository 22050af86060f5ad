package checkpoint

import "sync"

// The memory provider's stores reserve what an epoch adds to them while
// it fills them (EpochBufferPartition): the pending map of a partition
// that takes Put/Delete (its key and value copies, storeEntryBytes each)
// and the changelog arena past the capacity it kept from earlier epochs
// (which the engine reserves after each commit, BufferedPartition). A
// chunk at a time, so that a write costs an addition; a refusal fails
// the write (Put) or the commit (LogUpsert, which returns no error), so
// the epoch fails before its state is committed. The reservation is
// returned when the store is committed or aborted: the engine's store
// account then reserves what the partition keeps.

// epochReserver is the reservation function of a partition's stores,
// set by SetEpochBufferReserver.
type epochReserver struct {
	mu sync.Mutex
	fn func(n int64) error
}

func (r *epochReserver) set(fn func(n int64) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn = fn
}

func (r *epochReserver) get() func(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fn
}

var _ EpochBufferPartition = (*StorePartition)(nil)

// SetEpochBufferReserver implements EpochBufferPartition: the stores
// begun after it reserve their epoch's writes with reserve.
func (p *StorePartition) SetEpochBufferReserver(reserve func(n int64) error) {
	p.epochReserve.set(reserve)
}

// epochChunk is how far an epoch's writes may pass their reservation.
const epochChunk = 64 << 10

// storeEntryBytes approximates a pending entry's bytes besides its key
// and value (the map slot, the key's string and the value's slice
// headers, allocation rounding).
const storeEntryBytes = 80

// arenaEntryBytes is an arena entry's bytes besides its key and value
// (two offsets and a validity byte).
const arenaEntryBytes = 9

// epochMeter is one store's reservation of its epoch's writes.
type epochMeter struct {
	reserve  func(n int64) error // nil: nothing reserved
	held     int64               // the epoch's writes, estimated
	reserved int64
}

// grow notes n bytes written; on a refusal nothing is noted.
func (m *epochMeter) grow(n int64) error {
	if m.reserve == nil {
		return nil
	}
	m.held += n
	if d := m.held - m.reserved; d >= epochChunk {
		if err := m.reserve(d); err != nil {
			m.held -= n
			return err
		}
		m.reserved += d
	}
	return nil
}

// release returns the reservation.
func (m *epochMeter) release() {
	if m.reserve != nil && m.reserved != 0 {
		_ = m.reserve(-m.reserved)
	}
	m.held, m.reserved = 0, 0
}

// arenaCap is the arena's capacity in bytes.
func (a *changeArena) capBytes() int64 {
	return int64(cap(a.keys) + cap(a.values) + 4*cap(a.koff) + 4*cap(a.voff) + cap(a.valid))
}
