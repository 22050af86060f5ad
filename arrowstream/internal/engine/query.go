package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/clip"
)

// numRecentProgress is how many progress reports a query keeps.
const numRecentProgress = 100

// noDataProgressInterval: idle triggers are reported at most this often.
const noDataProgressInterval = 10 * time.Second

// QueryStatus is what a query is doing now.
type QueryStatus struct {
	Message         string `json:"message"`
	IsDataAvailable bool   `json:"isDataAvailable"`
	IsTriggerActive bool   `json:"isTriggerActive"`
}

// Hooks receive a query's progress reports and its end (the session's
// query manager). They are called from the query's goroutine.
type Hooks interface {
	Progress(p *stream.StreamingQueryProgress)
	Terminated(err error)
}

// Query is a running (or ended) streaming query (arrowstream.StreamingQuery
// wraps it). Its methods are safe for concurrent use.
type Query struct {
	id, runID, name string
	checkpointDir   string
	hooks           Hooks
	mb              *microBatch
	runCtx          context.Context
	logger          *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a trigger finds nothing to do (idleSeq) or the query stops
	// changedTaken: a waiter took changed since it was made, so notify
	// must close it. Untaken, nobody can be waiting on it and it is kept:
	// a fresh channel per epoch was one of an empty epoch's allocations.
	changedTaken bool
	status       QueryStatus
	recent       []*stream.StreamingQueryProgress
	err          error
	triggerSeq   int64 // triggers started
	idleSeq      int64 // the last trigger that found nothing to do
	lastBatchID  int64
	lastIdleLog  time.Time // trigger-clock time of the last batch or reported idle trigger
	idleLogged   bool
	// restarts counts the restarts of the "on-failure" restart policy;
	// lastRestartErr is the failure that caused the latest one.
	restarts       int
	lastRestartErr error
	// failCause, set by Fail, is the query's exception when it ends.
	failCause error
	// flush asks a continuous query to commit its open epoch now
	// (ProcessAllAvailable); nil for micro-batch queries.
	flush chan struct{}
	// recordsState: the checkpoint's metadata records stateful
	// operators, whose state may live in its epoch log alone (no state
	// directory).
	recordsState bool
}

// ID is the query's id, stable across restarts from the same checkpoint.
func (q *Query) ID() string { return q.id }

// RunID is unique to this start of the query.
func (q *Query) RunID() string { return q.runID }

// Name is the query name ("" when unnamed).
func (q *Query) Name() string { return q.name }

// CheckpointDir is the query's checkpoint location.
func (q *Query) CheckpointDir() string { return q.checkpointDir }

// IsActive reports whether the query is still running.
func (q *Query) IsActive() bool {
	select {
	case <-q.done:
		return false
	default:
		return true
	}
}

// Status returns the current status.
func (q *Query) Status() QueryStatus {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.status
}

// LastProgress returns the most recent progress report, or nil.
func (q *Query) LastProgress() *stream.StreamingQueryProgress {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.recent) == 0 {
		return nil
	}
	return q.recent[len(q.recent)-1]
}

// RecentProgress returns the recent progress reports, oldest first.
func (q *Query) RecentProgress() []*stream.StreamingQueryProgress {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]*stream.StreamingQueryProgress(nil), q.recent...)
}

// Exception returns the error that ended the query, or nil.
func (q *Query) Exception() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Restarts returns how many times the "on-failure" restart policy
// restarted the query, and the failure that caused the latest restart.
func (q *Query) Restarts() (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.restarts, q.lastRestartErr
}

// Fail stops the query as failed with cause (a governor's verdict, such
// as a quota the query's growth broke) and waits for it to end: the
// running epoch is interrupted as by Stop, and the query ends with cause
// as its exception, not restarted. Fail on an ended query does nothing.
func (q *Query) Fail(cause error) {
	q.mu.Lock()
	if q.failCause == nil {
		q.failCause = cause
	}
	q.mu.Unlock()
	q.cancel()
	<-q.done
}

// Stop stops the query and waits for it to end. The running epoch is
// interrupted; the checkpoint stays consistent (the epoch re-runs on the
// next start). Stop is idempotent.
func (q *Query) Stop() error {
	q.cancel()
	<-q.done
	return nil
}

// AwaitTermination waits until the query ends (or ctx does) and returns
// the error that ended it, nil for a clean stop.
func (q *Query) AwaitTermination(ctx context.Context) error {
	select {
	case <-q.done:
		return q.Exception()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ProcessAllAvailable blocks until every piece of data available when it was
// called (and the no-data epochs it causes) has been processed and
// committed, or the query ends (its error is returned), or ctx ends. A
// continuous query commits its open epoch at once instead of waiting for
// the epoch interval.
func (q *Query) ProcessAllAvailable(ctx context.Context) error {
	q.mu.Lock()
	target := q.triggerSeq + 1
	if q.flush != nil {
		select {
		case q.flush <- struct{}{}:
		default:
		}
	}
	for q.idleSeq < target {
		ch := q.changed
		q.changedTaken = true
		q.mu.Unlock()
		select {
		case <-ch:
		case <-q.done:
			return q.terminationError()
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
	q.mu.Unlock()
	return nil
}

func (q *Query) terminationError() error {
	if err := q.Exception(); err != nil {
		return err
	}
	return fmt.Errorf("arrowstream: query %s stopped", q.Describe())
}

// Describe names the query in messages: its name, id and run id.
func (q *Query) Describe() string {
	if q.name != "" {
		return fmt.Sprintf("%q [id = %s, runId = %s]", q.name, q.id, q.runID)
	}
	return fmt.Sprintf("[id = %s, runId = %s]", q.id, q.runID)
}

// notify wakes the waiters on changed. Callers hold q.mu.
func (q *Query) notify() {
	if !q.changedTaken {
		return
	}
	close(q.changed)
	q.changed = make(chan struct{})
	q.changedTaken = false
}

func (q *Query) setStatus(msg string, data, active bool) {
	q.mu.Lock()
	q.status = QueryStatus{Message: msg, IsDataAvailable: data, IsTriggerActive: active}
	q.mu.Unlock()
}

// New prepares a query over cfg without starting it: the checkpoint's
// metadata gives the stable id. ctx bounds nothing after New returns: the
// query runs until Stop.
func New(ctx context.Context, name string, cfg Config) (*Query, error) {
	if cfg.Writer == nil {
		cfg.Writer = &checkpoint.Writer{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		return nil, fmt.Errorf("arrowstream: query %q: no clock", name)
	}
	// A new checkpoint records its operators' state schemas in the
	// metadata file (state_schema.go).
	var schemas map[string]string
	rec, _ := cfg.Exec.(stateSchemaRecorder)
	if rec != nil && recordsStateSchemas(cfg.Writer) {
		schemas = rec.StateSchemas()
	}
	meta, err := checkpoint.LoadOrCreateMetadataWith(cfg.CheckpointDir, cfg.Writer, schemas)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		rec.UseRecordedStateSchemas(cfg.CheckpointDir, meta)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q := &Query{
		id: meta.ID, runID: checkpoint.NewUUID(), name: name, checkpointDir: cfg.CheckpointDir,
		cancel: cancel, done: make(chan struct{}), changed: make(chan struct{}),
		status: QueryStatus{Message: "Initializing"}, runCtx: runCtx,
	}
	if cfg.Trigger.Kind == TriggerContinuous {
		// Before the query runs, so that no ProcessAllAvailable misses it.
		q.flush = make(chan struct{}, 1)
	}
	q.recordsState = len(meta.StateSchemas) > 0
	if q.mb, err = newMicroBatch(cfg, q); err != nil {
		cancel()
		return nil, err
	}
	q.logger = cfg.Logger.With("query", name, "id", q.id)
	return q, nil
}

// Start runs the query in its own goroutine; hooks (may be nil) receive its
// progress and its end. Start is called once.
func (q *Query) Start(hooks Hooks) {
	q.hooks = hooks
	go q.run(q.runCtx, q.mb, q.logger)
}

// Discard releases a query that New prepared and that will not start.
func (q *Query) Discard() { q.cancel() }

// run is the query's goroutine: the trigger executor around the
// micro-batch loop (docs/semantics.md §10).
func (q *Query) run(ctx context.Context, m *microBatch, logger *slog.Logger) {
	var err error
	defer func() {
		if r := recover(); r != nil {
			logger.Error("streaming query panicked", "query", q.Describe(), "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("arrowstream: query %s panicked: %v", q.Describe(), r)
		}
		if errors.Is(err, context.Canceled) && ctx.Err() != nil || err == nil {
			err = nil // stopped
			q.mu.Lock()
			if q.failCause != nil {
				err = q.failCause // stopped by Fail
			}
			q.mu.Unlock()
		}
		if closer, ok := m.cfg.Exec.(interface{ Close() error }); ok {
			closer.Close()
		}
		if m.cfg.CloseSink != nil {
			m.cfg.CloseSink()
		}
		if m.cfg.Unlock != nil {
			m.cfg.Unlock()
		}
		// The error is kept, logged and shown in the query's status: one
		// quoting a record or value of megabytes is bounded first.
		err = clip.Bound(err, MaxErrorBytes)
		q.mu.Lock()
		q.err = err
		q.status = QueryStatus{Message: "Stopped"}
		q.notify()
		q.mu.Unlock()
		if m.cfg.OnStop != nil {
			m.cfg.OnStop(err)
		}
		// The manager forgets the query before Stop returns, so that a
		// query stopped by name is gone from Active when its caller goes on.
		if q.hooks != nil {
			q.hooks.Terminated(err)
		}
		close(q.done)
	}()
	policy := m.cfg.Restart
	for attempt := 1; ; attempt++ {
		if err = q.runOnce(ctx, m); err == nil {
			return
		}
		if m.ranBatch {
			attempt = 1 // a committed epoch ends a run of failures
		}
		if !q.restartAfter(ctx, policy, attempt, err) {
			if policy.MaxAttempts > 0 && attempt > policy.MaxAttempts && Retryable(err) {
				err = fmt.Errorf("arrowstream: query %s failed after %d consecutive restarts (%s %d): %w",
					q.Describe(), attempt-1, stream.OptRestartMaxAttempts, policy.MaxAttempts, err)
			}
			return
		}
		// Restart from the checkpoint, as a new start of the query would:
		// the offset and commit logs say which epoch runs next.
		targets := m.availableNowTargets
		if m, err = newMicroBatch(m.cfg, q); err != nil {
			return
		}
		m.availableNowTargets = targets
	}
}

// runOnce is one run of the query from its checkpoint, until it stops
// (nil), fails or its trigger says it is done.
func (q *Query) runOnce(ctx context.Context, m *microBatch) (err error) {
	defer func() {
		if cerr := m.closeLogs(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	q.setStatus("Initializing sources", false, false)
	if err = m.populateStartOffsets(); err != nil {
		return
	}
	if m.cfg.Trigger.Kind == TriggerAvailableNow && m.availableNowTargets == nil {
		targets := make([]stream.Offset, len(m.cfg.Sources))
		for i, src := range m.cfg.Sources {
			if targets[i], err = src.LatestOffset(ctx); err != nil {
				err = fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.SourceDescriptions[i], err)
				return
			}
		}
		m.availableNowTargets = targets
	}
	if m.cfg.Trigger.Kind == TriggerContinuous {
		err = q.runContinuous(ctx, m)
		return
	}
	for {
		if ctx.Err() != nil {
			return nil
		}
		q.mu.Lock()
		q.triggerSeq++
		seq := q.triggerSeq
		q.mu.Unlock()
		q.setStatus("Processing new data", true, true)
		triggerStart := m.cfg.Clock.Now()
		// Taken before the trigger looks for data, so that data added
		// after that look wakes an idle wait (NotifyingSource).
		m.wake = appendWakeChannels(m.wake[:0], m.cfg.Sources)
		wake := m.wake
		var res triggerResult
		res, err = m.runTrigger(ctx)
		if err != nil {
			return
		}
		q.record(seq, res, m.cfg.Clock.Now())
		switch {
		case m.cfg.Trigger.Kind == TriggerOnce:
			return nil
		case m.cfg.Trigger.Kind == TriggerAvailableNow && !res.ran:
			return nil
		}
		q.setStatus("Waiting for data to arrive", false, false)
		if err = q.waitForNextTrigger(ctx, m, triggerStart, res.ran, wake); err != nil {
			return
		}
	}
}

// waitForNextTrigger sleeps until the next trigger is due.
func (q *Query) waitForNextTrigger(ctx context.Context, m *microBatch, start time.Time, ran bool, wake []<-chan struct{}) error {
	interval := m.cfg.Trigger.Interval
	if m.cfg.Trigger.Kind != TriggerProcessingTime || interval <= 0 {
		if ran {
			return nil
		}
		// Idle: poll again after a short real-time delay, or as soon as a
		// NotifyingSource says data was added.
		// One timer per run, reset for each idle wait (since Go 1.23 a
		// reset timer delivers no stale tick).
		d := idlePollDelay(m.cfg.Sources)
		if m.idleTimer == nil {
			m.idleTimer = time.NewTimer(d)
		} else {
			m.idleTimer.Reset(d)
		}
		defer m.idleTimer.Stop()
		return waitWake(ctx, m.idleTimer.C, wake)
	}
	next := time.UnixMilli((start.UnixMilli()/interval.Milliseconds())*interval.Milliseconds() + interval.Milliseconds())
	if m.cfg.Clock.Now().After(next) {
		m.cfg.Logger.Warn("current batch is falling behind", "query", q.Describe(), "trigger", interval)
		return nil
	}
	return m.cfg.Clock.WaitUntil(ctx, next)
}

// record publishes a trigger's progress and wakes waiters.
func (q *Query) record(seq int64, res triggerResult, now time.Time) {
	q.mu.Lock()
	// As Spark's ProgressReporter: a batch always reports and resets the
	// idle timer; an idle trigger reports only if none has for the interval.
	publish := res.ran
	if res.ran {
		q.lastIdleLog, q.idleLogged = now, true
	} else {
		q.idleSeq = seq
		if !q.idleLogged || now.Sub(q.lastIdleLog) >= noDataProgressInterval {
			q.lastIdleLog, q.idleLogged = now, true
			publish = true
		}
	}
	if publish && res.progress == nil && res.idle != nil {
		res.progress = res.idle.build()
	}
	if publish && res.progress != nil {
		q.recent = append(q.recent, res.progress)
		if len(q.recent) > numRecentProgress {
			q.recent = q.recent[len(q.recent)-numRecentProgress:]
		}
	}
	if !res.ran {
		// Only an idle trigger can satisfy a ProcessAllAvailable
		// waiter (the one waiter on changed): waking it after a batch
		// made it park again at once, a thread woken for nothing in
		// every epoch that outlasted the caller's own work.
		q.notify()
	}
	q.mu.Unlock()
	if publish && res.progress != nil && q.hooks != nil {
		q.hooks.Progress(res.progress)
	}
}
