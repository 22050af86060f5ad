package arrowstream

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
)

// QueryListener receives query lifecycle events. Callbacks run on the
// query's goroutine (progress, terminated) or the starter's (started): keep
// them short and do not call Stop from them.
type QueryListener interface {
	OnQueryStarted(q *StreamingQuery)
	OnQueryProgress(q *StreamingQuery, p *StreamingQueryProgress)
	OnQueryTerminated(q *StreamingQuery, err error)
}

// QueryManager tracks the streaming queries of a session (Spark's
// StreamingQueryManager). Safe for concurrent use.
type QueryManager struct {
	logger *slog.Logger

	mu        sync.Mutex
	active    map[string]*StreamingQuery // by id
	listeners []QueryListener
	ended     chan struct{} // closed and replaced when a query ends
}

// NewQueryManager returns an empty manager; logger nil means slog.Default().
func NewQueryManager(logger *slog.Logger) *QueryManager {
	if logger == nil {
		logger = slog.Default()
	}
	return &QueryManager{logger: logger, active: map[string]*StreamingQuery{}, ended: make(chan struct{})}
}

// AddListener registers a listener.
func (m *QueryManager) AddListener(l QueryListener) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.listeners = append(m.listeners, l)
}

// RemoveListener unregisters a listener.
func (m *QueryManager) RemoveListener(l QueryListener) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.listeners {
		if x == l {
			m.listeners = append(m.listeners[:i], m.listeners[i+1:]...)
			return
		}
	}
}

// Active returns the running queries.
func (m *QueryManager) Active() []*StreamingQuery {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*StreamingQuery, 0, len(m.active))
	for _, q := range m.active {
		out = append(out, q)
	}
	return out
}

// Get returns the active query with the given id, or nil.
func (m *QueryManager) Get(id string) *StreamingQuery {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active[id]
}

// AwaitAnyTermination waits until some query ends.
func (m *QueryManager) AwaitAnyTermination(ctx context.Context) error {
	m.mu.Lock()
	ch := m.ended
	m.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StopAll stops every active query.
func (m *QueryManager) StopAll() {
	for _, q := range m.Active() {
		q.Stop()
	}
}

func (m *QueryManager) snapshotListeners() []QueryListener {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]QueryListener(nil), m.listeners...)
}

func (m *QueryManager) progress(q *StreamingQuery, p *StreamingQueryProgress) {
	for _, l := range m.snapshotListeners() {
		l.OnQueryProgress(q, p)
	}
}

func (m *QueryManager) terminated(q *StreamingQuery, err error) {
	m.mu.Lock()
	if m.active[q.ID()] == q {
		delete(m.active, q.ID())
	}
	close(m.ended)
	m.ended = make(chan struct{})
	m.mu.Unlock()
	if err != nil {
		m.logger.Error("streaming query failed", "query", q.describe(), "err", err)
	}
	for _, l := range m.snapshotListeners() {
		l.OnQueryTerminated(q, err)
	}
}

// start registers and starts a query over cfg. The checkpoint's metadata
// gives the stable id; a query with the same id already running in this
// manager is refused.
func (m *QueryManager) start(ctx context.Context, name string, cfg engine.Config) (*StreamingQuery, error) {
	if cfg.Logger == nil {
		cfg.Logger = m.logger
	}
	eq, err := engine.New(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	q := &StreamingQuery{q: eq}
	m.mu.Lock()
	if other, ok := m.active[eq.ID()]; ok {
		m.mu.Unlock()
		eq.Discard()
		return nil, fmt.Errorf("arrowstream: cannot start query with id %s as another query with the same id is already active: %s (checkpoint %s)", eq.ID(), other.describe(), cfg.CheckpointDir)
	}
	if name != "" {
		for _, other := range m.active {
			if other.Name() == name {
				m.mu.Unlock()
				eq.Discard()
				return nil, fmt.Errorf("arrowstream: cannot start query with name %q as a query with that name is already active", name)
			}
		}
	}
	m.active[eq.ID()] = q
	m.mu.Unlock()
	for _, l := range m.snapshotListeners() {
		l.OnQueryStarted(q)
	}
	eq.Start(queryHooks{m: m, q: q})
	return q, nil
}

// queryHooks forwards one query's events to its manager.
type queryHooks struct {
	m *QueryManager
	q *StreamingQuery
}

func (h queryHooks) Progress(p *StreamingQueryProgress) { h.m.progress(h.q, p) }
func (h queryHooks) Terminated(err error)               { h.m.terminated(h.q, err) }
