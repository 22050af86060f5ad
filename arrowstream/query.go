package arrowstream

import (
	"context"

	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
)

// QueryStatus is what a query is doing now.
type QueryStatus = engine.QueryStatus

// StreamingQuery is a running (or ended) streaming query. Its methods are
// safe for concurrent use.
type StreamingQuery struct {
	q *engine.Query
}

// ID is the query's id, stable across restarts from the same checkpoint.
func (q *StreamingQuery) ID() string { return q.q.ID() }

// RunID is unique to this start of the query.
func (q *StreamingQuery) RunID() string { return q.q.RunID() }

// Name is the query name ("" when unnamed).
func (q *StreamingQuery) Name() string { return q.q.Name() }

// CheckpointDir is the query's checkpoint location.
func (q *StreamingQuery) CheckpointDir() string { return q.q.CheckpointDir() }

// IsActive reports whether the query is still running.
func (q *StreamingQuery) IsActive() bool { return q.q.IsActive() }

// Status returns the current status.
func (q *StreamingQuery) Status() QueryStatus { return q.q.Status() }

// LastProgress returns the most recent progress report, or nil.
func (q *StreamingQuery) LastProgress() *StreamingQueryProgress { return q.q.LastProgress() }

// RecentProgress returns the recent progress reports, oldest first.
func (q *StreamingQuery) RecentProgress() []*StreamingQueryProgress { return q.q.RecentProgress() }

// Exception returns the error that ended the query, or nil.
func (q *StreamingQuery) Exception() error { return q.q.Exception() }

// Restarts returns how many times the "on-failure" restart policy
// (writer option restartPolicy) restarted the query from its checkpoint,
// and the failure that caused the latest restart.
func (q *StreamingQuery) Restarts() (int, error) { return q.q.Restarts() }

// Fail stops the query as failed with cause and waits for it to end: its
// exception (and its listeners' OnQueryTerminated error) is cause. A
// server uses it to stop a query that broke a quota. The checkpoint stays
// consistent, as with Stop.
func (q *StreamingQuery) Fail(cause error) { q.q.Fail(cause) }

// Stop stops the query and waits for it to end. The running epoch is
// interrupted; the checkpoint stays consistent (the epoch re-runs on the
// next start). Stop is idempotent.
func (q *StreamingQuery) Stop() error { return q.q.Stop() }

// AwaitTermination waits until the query ends (or ctx does) and returns
// the error that ended it, nil for a clean stop.
func (q *StreamingQuery) AwaitTermination(ctx context.Context) error {
	return q.q.AwaitTermination(ctx)
}

// ProcessAllAvailable blocks until every piece of data available when it was
// called (and the no-data epochs it causes) has been processed and
// committed, or the query ends (its error is returned), or ctx ends. A
// continuous query commits its open epoch at once instead of waiting for
// the epoch interval.
func (q *StreamingQuery) ProcessAllAvailable(ctx context.Context) error {
	return q.q.ProcessAllAvailable(ctx)
}

func (q *StreamingQuery) describe() string { return q.q.Describe() }
