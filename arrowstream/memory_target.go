package arrowstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/internal/memtarget"
)

// heldSource is a holder of data the session counts as held: a catalog of
// memory-sink tables (memsink.Install registers it).
type heldSource struct {
	name  string
	bytes func() int64
}

// AddHeldBytes makes f count as held data in HeldBytes (and so in the
// memory target): memsink.Install registers its catalog's tables. name
// says what f measures, for the logs.
func (s *Session) AddHeldBytes(name string, f func() int64) {
	if f == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = append(s.held, heldSource{name: name, bytes: f})
}

// HeldBytes is the data the session holds now: the state of its running
// streaming queries (memoryUsedBytes of each one's latest progress, summed
// over its stateful operators) plus what the holders registered with
// AddHeldBytes hold (memory-sink tables: Arrow buffers and bookkeeping).
func (s *Session) HeldBytes() int64 {
	var n int64
	for _, q := range s.manager.Active() {
		n += q.LastProgress().StateMemoryBytes()
	}
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	for _, h := range held {
		n += max(h.bytes(), 0)
	}
	return n
}

// MemoryTargetOptions configure Session.StartMemoryTarget.
type MemoryTargetOptions struct {
	// Ratio is the Go runtime memory allowed per held byte over the
	// runtime's memory when nothing is held (> 0). 1.25 keeps the process
	// near 1.5× its held bytes where what is live allows it (see
	// internal/memtarget and docs/operations.md).
	Ratio float64
	// Ceiling is the largest limit set (0: none), typically the process's
	// hard budget (the server's --memory-limit).
	Ceiling int64
	// Interval is how often the held bytes are measured besides after
	// each epoch of a streaming query, for tables that change or go
	// otherwise (INSERT, DROP, retention; 0: one second).
	Interval time.Duration
}

// MemoryTarget keeps the Go runtime's soft memory limit in proportion to
// what a session holds (Session.StartMemoryTarget). The limit is
// process-wide: run at most one per process.
type MemoryTarget struct {
	s      *Session
	t      *memtarget.Target
	cancel context.CancelFunc
	done   chan struct{}
	last   atomic.Int64 // when an epoch last caused an update (Unix ns)

	mu   sync.Mutex
	held int64 // the held bytes of the last update
	stop bool
}

// StartMemoryTarget sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) from the bytes the session holds (HeldBytes):
// the runtime's memory when nothing is held (measured now, after a
// collection: start it before the queries) plus opts.Ratio per held byte,
// never under what is live plus a slack (internal/memtarget), at most
// opts.Ceiling. The limit follows the held bytes after every epoch of the
// session's streaming queries and every opts.Interval, until Stop, which
// restores the limit in force before. Why: with the default GOGC=100 the
// collector lets the heap reach twice what was live, and a table or a
// query's state is live, so a process holding H bytes is resident at
// about 2·H; under the target it stays near Base + Ratio·H where the live
// memory allows it. The cost is collector CPU (docs/operations.md). The
// limit is process-wide: a program runs at most one target at a time.
func (s *Session) StartMemoryTarget(opts MemoryTargetOptions) (*MemoryTarget, error) {
	if opts.Interval < 0 {
		return nil, fmt.Errorf("memory target: interval %v: must not be negative", opts.Interval)
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	t, err := memtarget.Start(memtarget.Policy{Ratio: opts.Ratio, Ceiling: opts.Ceiling})
	if err != nil {
		return nil, fmt.Errorf("memory target: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &MemoryTarget{s: s, t: t, cancel: cancel, done: make(chan struct{})}
	s.manager.AddListener(m)
	m.update()
	go m.tick(ctx, opts.Interval)
	p := t.Policy()
	s.logger.Info("memory target started", "ratio", p.Ratio, "base", p.Base, "ceiling", p.Ceiling)
	return m, nil
}

// tick updates the limit every interval until ctx ends.
func (m *MemoryTarget) tick(ctx context.Context, interval time.Duration) {
	defer close(m.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.update()
		}
	}
}

// update measures the held bytes and sets the limit for them.
func (m *MemoryTarget) update() {
	held := m.s.HeldBytes()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop {
		return // Stop restored the previous limit: leave it
	}
	m.held = held
	m.t.Update(held)
}

// OnQueryStarted implements QueryListener.
func (m *MemoryTarget) OnQueryStarted(*StreamingQuery) {}

// progressGap spaces the updates epochs cause: a measure reads every
// running query's progress and every table's size, so many queries with
// small epochs would otherwise pay for it quadratically. An epoch within
// the gap of the last update leaves the limit to the next one (or the
// ticker): a limit set for fewer held bytes only makes the collector run
// a little sooner.
const progressGap = 10 * time.Millisecond

// OnQueryProgress implements QueryListener: the limit follows the epochs,
// at most one update per progressGap.
func (m *MemoryTarget) OnQueryProgress(*StreamingQuery, *StreamingQueryProgress) {
	now := time.Now().UnixNano()
	if last := m.last.Load(); now-last < int64(progressGap) || !m.last.CompareAndSwap(last, now) {
		return
	}
	m.update()
}

// OnQueryTerminated implements QueryListener.
func (m *MemoryTarget) OnQueryTerminated(*StreamingQuery, error) { m.update() }

// Held is the held bytes the limit was last set for.
func (m *MemoryTarget) Held() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// Limit is the soft memory limit set last (the one restored after Stop).
func (m *MemoryTarget) Limit() int64 { return m.t.Limit() }

// Ratio and Base are the policy in force (Base as measured at the start).
func (m *MemoryTarget) Ratio() float64 { return m.t.Policy().Ratio }

// Base is the runtime's memory with nothing held, measured at the start.
func (m *MemoryTarget) Base() int64 { return m.t.Policy().Base }

// Stop ends the target and restores the limit in force before it
// started. It is idempotent, and does nothing on a nil target.
func (m *MemoryTarget) Stop() {
	if m == nil {
		return
	}
	m.mu.Lock()
	if m.stop {
		m.mu.Unlock()
		return
	}
	m.stop = true
	m.mu.Unlock()
	m.s.manager.RemoveListener(m)
	m.cancel()
	<-m.done
	m.t.Stop()
}
