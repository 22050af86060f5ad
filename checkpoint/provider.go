package checkpoint

import (
	"errors"
	"sync"
)

// StateStoreProvider creates the state partitions of one query. The
// built-in providers are "memory" (MemoryProvider: every version in memory,
// deltas and snapshots as zstd Arrow IPC files) and "pebble" (package
// checkpoint/pebblestore: state on local disk in Pebble, SST files copied
// into the checkpoint). A provider may share resources across its
// partitions (Pebble's block cache) and is closed when the query stops.
type StateStoreProvider interface {
	// Name is the provider's name as selected by stateStore.provider.
	Name() string
	// OpenPartition opens the durable state of one (operator, partition)
	// whose checkpoint directory is dir, creating it if needed. Nothing is
	// loaded until Begin.
	OpenPartition(dir string) (StatePartition, error)
	// MemoryBytes is the memory the provider holds beyond its partitions
	// (a shared cache), for progress reports.
	MemoryBytes() int64
	// Metrics are provider-wide figures (not summed over partitions), nil
	// when there are none.
	Metrics() map[string]int64
	// Close closes every partition it opened and releases shared
	// resources.
	Close() error
}

// BoundedProvider is a StateStoreProvider whose memory is bounded by its
// settings rather than by the state it holds (the Pebble provider: a
// block cache shared by the query's partitions and each partition's
// memtables, allocated outside the Go heap with cgo). The engine
// reserves those bounds on the table's account, instead of the
// partitions' key and value bytes, which live on disk.
type BoundedProvider interface {
	// SharedMemoryBound is the memory shared by every partition of the
	// query (the block cache).
	SharedMemoryBound() int64
	// PartitionMemoryBound is what each open partition may hold (its
	// memtables).
	PartitionMemoryBound() int64
}

// EpochBufferPartition is a StatePartition whose stores hold an epoch's
// writes in memory of their own until the commit (the memory provider's
// pending map and changelog arena, the Pebble provider's batch of updated
// keys and values). The engine hands it the reservation function of its
// operator's account: its stores reserve the writes as they grow (a
// refusal fails the write, or the commit, so the epoch fails before its
// state is committed) and return the reservation when the store is
// committed or aborted.
type EpochBufferPartition interface {
	// SetEpochBufferReserver sets the function the partition's stores
	// reserve n bytes with (negative: returned); nil reserves nothing.
	SetEpochBufferReserver(reserve func(n int64) error)
}

// BufferedPartition is a StatePartition that keeps buffers between
// epochs besides its state (the memory provider's changelog encode
// arena); the engine reserves them on the table's account with the
// partition's MemoryBytes.
type BufferedPartition interface {
	// BufferBytes is the memory of those buffers after the last commit.
	BufferBytes() int64
}

// StatePartition is the durable state of one (operator, partition).
type StatePartition interface {
	// Begin opens the store for an epoch reading version (the epoch id);
	// its Commit writes version+1. One store at a time per partition.
	Begin(version int64) (StateStore, error)
	// MemoryBytes is the memory the partition holds for its latest
	// version.
	MemoryBytes() int64
	// Metrics are the partition's figures after its last commit (latency
	// per commit phase, bytes copied); progress sums them over partitions.
	// Nil when there are none.
	Metrics() map[string]int64
	// Close releases the partition; the checkpoint is left as is.
	Close() error
}

// MemoryProvider is the in-memory provider: StorePartitions with the
// given options.
type MemoryProvider struct {
	w    *Writer
	opts StoreOptions

	mu    sync.Mutex
	parts []*StorePartition // opened, closed with the provider
	// glog is the state log of group commit (OpenStateLog), nil until
	// opened; stateDir is the state directory it belongs to.
	glog     *StateLog
	stateDir string
	// byRel finds a group-committed partition by its state log path
	// ("<operator>/<partition>"), for purgeLog.
	byRel map[string]*StorePartition
	// packs are the snapshot packs of each operator (by its state
	// directory) of the group-committed partitions.
	packs map[string]*snapPacks
}

// NewMemoryProvider returns the "memory" provider writing through w.
func NewMemoryProvider(w *Writer, opts StoreOptions) *MemoryProvider {
	// One partition at a time compacts a snapshot from its changelogs:
	// compaction decodes a partition's state, and doing all at once
	// would hold a second copy of the whole operator's state.
	opts.compactSlots = make(chan struct{}, 1)
	// Maintenance of all its partitions shares a few workers.
	opts.maint = newMaintPool(defaultMaintWorkers())
	return &MemoryProvider{w: w, opts: opts}
}

// Name implements StateStoreProvider.
func (m *MemoryProvider) Name() string { return "memory" }

// OpenPartition implements StateStoreProvider.
func (m *MemoryProvider) OpenPartition(dir string) (StatePartition, error) {
	p, err := OpenStorePartition(dir, m.w, m.opts)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.attach(p); err != nil {
		return nil, err
	}
	m.parts = append(m.parts, p)
	return p, nil
}

// MemoryBytes implements StateStoreProvider: nothing is shared.
func (m *MemoryProvider) MemoryBytes() int64 { return 0 }

// Metrics implements StateStoreProvider: none.
func (m *MemoryProvider) Metrics() map[string]int64 { return nil }

// Close implements StateStoreProvider: it closes every partition it
// opened, waiting for their background maintenance.
func (m *MemoryProvider) Close() error {
	m.mu.Lock()
	parts := m.parts
	m.parts, m.byRel, m.packs = nil, nil, nil
	glog := m.glog
	m.glog = nil
	m.mu.Unlock()
	var errs []error
	for _, p := range parts {
		if err := p.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if glog != nil {
		errs = append(errs, glog.Close())
	}
	return errors.Join(errs...)
}

// Metrics implements StatePartition: the in-memory store reports none
// beyond MemoryBytes.
func (p *StorePartition) Metrics() map[string]int64 { return nil }

// Close implements StatePartition: it waits for background maintenance
// and drops the loaded version.
func (p *StorePartition) Close() error {
	err := p.WaitMaintenance()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.data, p.version, p.bytes, p.files = nil, -1, 0, nil
	p.dropLive()
	p.memBytes.Store(0)
	p.arena = nil
	p.arenaBytes.Store(0)
	p.baseVers.Store(nil)
	p.dataless, p.rows, p.estBytes = false, 0, 0
	p.liveBytes, p.liveBytesKnown = 0, false
	return err
}
