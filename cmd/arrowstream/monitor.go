package main

import (
	"sort"
	"sync"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// progressHistory is how many progress reports the monitor keeps per query
// (the charts of the web UI): five minutes at one trigger per second.
const progressHistory = 300

// monitor follows the session's streaming queries as a QueryListener: it
// keeps each query's recent progress (also after the query ends), feeds
// the metrics and wakes the status display. Safe for concurrent use.
type monitor struct {
	sinkSize func(table string) (memsink.Size, bool)
	metrics  *metrics // nil: none

	mu      sync.Mutex
	queries map[string]*tracked // by query id
	changed chan struct{}       // closed and replaced on every event
}

// tracked is what the monitor knows of one query.
type tracked struct {
	q        *arrowstream.StreamingQuery
	started  time.Time
	ended    time.Time
	err      error
	progress []*arrowstream.StreamingQueryProgress // oldest first
	dropped  int64                                 // late rows dropped since the monitor saw the query start
}

func newMonitor(sinkSize func(string) (memsink.Size, bool), m *metrics) *monitor {
	return &monitor{sinkSize: sinkSize, metrics: m, queries: map[string]*tracked{}, changed: make(chan struct{})}
}

func (m *monitor) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Changed returns a channel closed at the next event.
func (m *monitor) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// OnQueryStarted implements arrowstream.QueryListener. A query restarted
// under the same id (CREATE OR REFRESH) keeps its history.
func (m *monitor) OnQueryStarted(q *arrowstream.StreamingQuery) {
	m.mu.Lock()
	t, ok := m.queries[q.ID()]
	if !ok {
		t = &tracked{}
		m.queries[q.ID()] = t
	}
	t.q, t.started, t.ended, t.err = q, time.Now(), time.Time{}, nil
	m.notifyLocked()
	m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.started(queryLabel(q))
	}
}

// OnQueryProgress implements arrowstream.QueryListener.
func (m *monitor) OnQueryProgress(q *arrowstream.StreamingQuery, p *arrowstream.StreamingQueryProgress) {
	m.mu.Lock()
	if t, ok := m.queries[q.ID()]; ok {
		t.progress = append(t.progress, p)
		for _, so := range p.StateOperators {
			t.dropped += so.NumRowsDroppedByWatermark
		}
		if len(t.progress) > progressHistory {
			t.progress = append(t.progress[:0:0], t.progress[len(t.progress)-progressHistory:]...)
		}
	}
	m.notifyLocked()
	m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.progress(queryLabel(q), p)
	}
}

// OnQueryTerminated implements arrowstream.QueryListener.
func (m *monitor) OnQueryTerminated(q *arrowstream.StreamingQuery, err error) {
	m.mu.Lock()
	if t, ok := m.queries[q.ID()]; ok && t.q == q {
		t.ended, t.err = time.Now(), err
	}
	m.notifyLocked()
	m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.terminated(queryLabel(q), err)
	}
}

// queryLabel names a query in metrics and displays: its name, else its id.
func queryLabel(q *arrowstream.StreamingQuery) string {
	if q.Name() != "" {
		return q.Name()
	}
	return q.ID()
}

// queryInfo is a query's current state as the web UI and the status
// display show it.
type queryInfo struct {
	ID        string `json:"id"`
	RunID     string `json:"runId"`
	Name      string `json:"name"`
	Status    string `json:"status"` // active, stopped or failed
	Message   string `json:"message"`
	Error     string `json:"error,omitempty"`
	Started   string `json:"started"`
	Ended     string `json:"ended,omitempty"`
	Trigger   bool   `json:"triggerActive"`
	BatchID   int64  `json:"batchId"`
	HasBatch  bool   `json:"hasBatch"`
	Timestamp string `json:"timestamp,omitempty"`

	NumInputRows           int64   `json:"numInputRows"`
	InputRowsPerSecond     float64 `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64 `json:"processedRowsPerSecond"`
	BatchDurationMs        int64   `json:"batchDurationMs"`
	Watermark              string  `json:"watermark,omitempty"`
	StateRows              int64   `json:"stateRows"`
	StateBytes             int64   `json:"stateBytes"`
	LateRowsDropped        int64   `json:"lateRowsDropped"` // since this process started the query

	SinkRows   int64 `json:"sinkRows"`
	SinkBytes  int64 `json:"sinkBytes"`
	SinkEpochs int   `json:"sinkEpochs"`
}

// Queries returns every query seen, active ones first, then by name.
func (m *monitor) Queries() []queryInfo {
	m.mu.Lock()
	out := make([]queryInfo, 0, len(m.queries))
	for id, t := range m.queries {
		out = append(out, m.infoLocked(id, t))
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Status == "active") != (out[j].Status == "active") {
			return out[i].Status == "active"
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Query returns one query's state.
func (m *monitor) Query(id string) (queryInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.queries[id]
	if !ok {
		return queryInfo{}, false
	}
	return m.infoLocked(id, t), true
}

// Progress returns a query's recent progress reports, oldest first.
func (m *monitor) Progress(id string) ([]*arrowstream.StreamingQueryProgress, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.queries[id]
	if !ok {
		return nil, false
	}
	return append([]*arrowstream.StreamingQueryProgress(nil), t.progress...), true
}

func (m *monitor) infoLocked(id string, t *tracked) queryInfo {
	st := t.q.Status()
	info := queryInfo{
		ID: id, RunID: t.q.RunID(), Name: t.q.Name(), Status: "active", Message: st.Message,
		Trigger: st.IsTriggerActive, Started: t.started.UTC().Format(time.RFC3339Nano),
	}
	if !t.ended.IsZero() {
		info.Status, info.Ended = "stopped", t.ended.UTC().Format(time.RFC3339Nano)
		if t.err != nil {
			info.Status, info.Error = "failed", t.err.Error()
		}
	}
	if n := len(t.progress); n > 0 {
		p := t.progress[n-1]
		info.BatchID, info.HasBatch, info.Timestamp = p.BatchID, true, p.Timestamp
		info.NumInputRows, info.BatchDurationMs = p.NumInputRows, p.BatchDuration
		if p.InputRowsPerSecond != nil {
			info.InputRowsPerSecond = *p.InputRowsPerSecond
		}
		if p.ProcessedRowsPerSecond != nil {
			info.ProcessedRowsPerSecond = *p.ProcessedRowsPerSecond
		}
		info.Watermark = p.EventTime["watermark"]
		for _, so := range p.StateOperators {
			info.StateRows += so.NumRowsTotal
			info.StateBytes += so.MemoryUsedBytes
		}
		info.LateRowsDropped = t.dropped
	}
	if m.sinkSize != nil && info.Name != "" {
		if sz, ok := m.sinkSize(info.Name); ok {
			info.SinkRows, info.SinkBytes, info.SinkEpochs = sz.Rows, sz.Bytes, sz.Epochs
		}
	}
	return info
}
