package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// continuousPollInterval is how often a continuous query asks a source
// that cannot notify (NotifyingSource) for new data, unless the writer
// option "continuous.pollInterval" says otherwise (a source whose
// LatestOffset costs a network round trip, such as Kafka, may want more).
const continuousPollInterval = time.Millisecond

// DefaultContinuousMaxPendingBytes bounds the output a continuous query
// holds for its open epoch; reaching it commits the epoch early, so that a
// fast source cannot grow memory without bound (writer option
// "continuous.maxPendingBytes").
const DefaultContinuousMaxPendingBytes = 64 << 20

// ContinuousConfig is the part of Config only continuous queries use.
type ContinuousConfig struct {
	// Stateful: the plan has an Update-mode aggregation, run once per
	// epoch over what arrived (checkContinuous).
	Stateful bool
	// Arrival: rows are shown as they are processed (ArrivalSink).
	Arrival         bool
	MaxPendingBytes int64
	PollInterval    time.Duration
}

// continuousRun is the long-running pipeline of a continuous query over
// the micro-batch loop's checkpoint state: it processes data as it
// arrives, and every trigger interval hands the epoch to a committer
// goroutine that writes the epoch's end offsets, commits the sink and
// writes the commit (docs/semantics.md §10, docs/design.md) while the pipeline goes
// on with the next epoch. An epoch so recorded is replayed exactly after a
// crash (its offsets are in the offset log before its sink commit), which
// makes the committed output exactly once. Sources are called only from
// the pipeline goroutine.
type continuousRun struct {
	m *microBatch
	q *Query

	// The open epoch.
	startOffsets []stream.Offset // where it started reading each source
	processed    []stream.Offset // how far it has read each source
	inputRows    []atomic.Int64
	outputRows   atomic.Int64
	pending      []arrow.Record // its output, owned
	pendingB     int64
	outSchema    *arrow.Schema
	epochStart   time.Time       // wall time it started
	latencies    []time.Duration // per processing cycle: data noticed → visible
	noticed      []time.Time     // cycles waiting for commit visibility

	toCommit chan *epochCommit // to the committer; capacity 1 (back-pressure)
	done     chan *epochCommit // from the committer
	inflight int
}

// epochCommit is an epoch handed from the pipeline to the committer.
type epochCommit struct {
	id           int64
	start, end   []stream.Offset
	pending      []arrow.Record
	outSchema    *arrow.Schema
	inputRows    []atomic.Int64
	outputRows   int64
	noticed      []time.Time
	latencies    []time.Duration
	epochStart   time.Time // wall time the epoch opened
	epochEnd     time.Time // wall time it was handed over
	clockStart   time.Time // trigger-clock time it was handed over
	timestampMs  int64
	durations    map[string]int64
	err          error
	committedAtW time.Time
}

// runContinuous runs the query until ctx ends or an error.
func (q *Query) runContinuous(ctx context.Context, m *microBatch) error {
	if m.constructed {
		// The previous run wrote this epoch's offsets but not its commit:
		// replay it with exactly its recorded offsets.
		if _, err := q.runOneTrigger(ctx, m); err != nil {
			return err
		}
	}
	if m.cfg.Continuous.Stateful {
		return q.runContinuousStateful(ctx, m)
	}
	// The notification forwarders and the epoch ticker end with the run,
	// also when it fails.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &continuousRun{m: m, q: q, inputRows: make([]atomic.Int64, len(m.cfg.Sources)),
		processed: slices.Clone(m.committed),
		toCommit:  make(chan *epochCommit, 1), done: make(chan *epochCommit, 2)}
	c.openEpoch()
	committerDone := make(chan struct{})
	go func() {
		defer close(committerDone)
		for ec := range c.toCommit {
			ec.err = c.commit(ctx, ec)
			c.done <- ec
		}
	}()
	defer func() {
		close(c.toCommit)
		for waiting := true; waiting; {
			select {
			case <-c.done: // an epoch that ended with the query: replayed on restart if uncommitted
			case <-committerDone:
				waiting = false
			}
		}
		for len(c.done) > 0 {
			<-c.done
		}
		vector.ReleaseRecords(c.pending)
		c.pending = nil
		if as, ok := m.cfg.Sink.(stream.ArrivalSink); ok && m.cfg.Continuous.Arrival {
			as.DiscardUncommitted()
		}
	}()

	wake := make(chan struct{}, 1)
	poll := false
	for _, src := range m.cfg.Sources {
		ns, ok := src.(stream.NotifyingSource)
		if !ok {
			poll = true
			continue
		}
		go forwardNotifications(ctx, ns, wake)
	}
	ticks := make(chan struct{}, 1)
	go epochTicker(ctx, m.cfg.Clock, m.cfg.Trigger.Interval, ticks)
	var pollC <-chan time.Time
	if poll {
		t := time.NewTicker(cmp.Or(m.cfg.Continuous.PollInterval, continuousPollInterval))
		defer t.Stop()
		pollC = t.C
	}
	flush := q.flush
	q.setStatus("Processing new data", true, true)
	for {
		if _, err := c.processAvailable(ctx); err != nil {
			return err
		}
		if c.pendingB >= m.cfg.Continuous.MaxPendingBytes {
			if err := c.endEpoch(ctx, true); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-pollC:
		case ec := <-c.done:
			if err := c.committed(ctx, ec); err != nil {
				return err
			}
		case <-ticks:
			if err := c.endEpoch(ctx, false); err != nil {
				return err
			}
		case <-flush:
			if err := c.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// flush serves ProcessAllAvailable: end the open epoch now, wait for the
// committer, and keep going until the sources have nothing more, so that
// the idle trigger it waits for comes once what was available is
// committed.
func (c *continuousRun) flush(ctx context.Context) error {
	for {
		if _, err := c.processAvailable(ctx); err != nil {
			return err
		}
		if err := c.endEpoch(ctx, true); err != nil {
			return err
		}
		for c.inflight > 0 {
			select {
			case ec := <-c.done:
				if err := c.committed(ctx, ec); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		idle, err := c.sourcesIdle(ctx)
		if err != nil {
			return err
		}
		if idle {
			c.q.record(c.q.nextTrigger(), triggerResult{}, c.m.cfg.Clock.Now())
			return nil
		}
	}
}

// runOneTrigger runs one micro-batch trigger and publishes its progress.
func (q *Query) runOneTrigger(ctx context.Context, m *microBatch) (ran bool, err error) {
	seq := q.nextTrigger()
	res, err := m.runTrigger(ctx)
	if err != nil {
		return false, err
	}
	q.record(seq, res, m.cfg.Clock.Now())
	return res.ran, nil
}

// nextTrigger starts a trigger for ProcessAllAvailable's bookkeeping.
func (q *Query) nextTrigger() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.triggerSeq++
	return q.triggerSeq
}

// runContinuousStateful runs a continuous query with an Update-mode
// aggregation: its epochs are the trigger intervals, each processed as one
// batch with the state committed per epoch.
func (q *Query) runContinuousStateful(ctx context.Context, m *microBatch) error {
	flushing := false
	for {
		start := m.cfg.Clock.Now()
		ran, err := q.runOneTrigger(ctx, m)
		if err != nil {
			return err
		}
		if flushing && ran {
			continue // ProcessAllAvailable: run until a trigger finds nothing
		}
		flushing = false
		q.setStatus("Waiting for data to arrive", false, false)
		interval := m.cfg.Trigger.Interval.Milliseconds()
		next := time.UnixMilli((start.UnixMilli()/interval)*interval + interval)
		// ProcessAllAvailable cuts the wait short.
		wait, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-q.flush:
				stop()
			case <-wait.Done():
			}
		}()
		err = m.cfg.Clock.WaitUntil(wait, next)
		stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		flushing = err != nil
	}
}

func (c *continuousRun) openEpoch() {
	c.startOffsets = slices.Clone(c.processed)
	c.epochStart = time.Now()
	c.inputRows = make([]atomic.Int64, len(c.m.cfg.Sources))
	c.outputRows.Store(0)
	c.latencies, c.noticed = nil, nil
}

// processAvailable reads what every source has beyond the open epoch's
// position, runs the pipeline over it and keeps (and, with arrival
// visibility, shows) the output. It reports whether there was data.
func (c *continuousRun) processAvailable(ctx context.Context) (bool, error) {
	m := c.m
	noticed := time.Now()
	inputs := make([]vector.Operator, len(m.cfg.Sources))
	ends := make([]stream.Offset, len(m.cfg.Sources))
	closeInputs := func() {
		for _, in := range inputs {
			if in != nil {
				in.Close()
			}
		}
	}
	any := false
	for i, src := range m.cfg.Sources {
		latest, err := src.LatestOffset(ctx)
		if err != nil {
			closeInputs()
			return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.SourceDescriptions[i], err)
		}
		m.latest[i] = latest
		end := latest
		if ac, ok := src.(stream.AdmissionControlSource); ok {
			if end, err = ac.LatestOffsetFrom(ctx, c.processed[i]); err != nil {
				closeInputs()
				return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.SourceDescriptions[i], err)
			}
		}
		ends[i] = c.processed[i]
		if end == nil || end.Equal(c.processed[i]) {
			inputs[i] = emptyInput(src.Schema())
			continue
		}
		op, err := src.Read(ctx, c.processed[i], end)
		if err != nil {
			closeInputs()
			return false, fmt.Errorf("arrowstream: source %s: read (%s, %s]: %w", m.cfg.SourceDescriptions[i], c.processed[i], end, err)
		}
		inputs[i] = &countingOperator{Operator: op, rows: &c.inputRows[i]}
		ends[i] = end
		any = true
	}
	if !any {
		closeInputs()
		return false, nil
	}
	ep := stream.EpochInfo{
		ID:               m.batchID,
		BatchTimestampMs: m.cfg.Clock.Now().UnixMilli(),
		CheckpointDir:    m.cfg.CheckpointDir,
		NumPartitions:    m.numPartitions(),
	}
	out, err := m.cfg.Exec.Execute(ctx, ep, inputs)
	if err != nil {
		return false, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
	}
	defer out.Close()
	c.outSchema = out.Schema()
	arrival, _ := m.cfg.Sink.(stream.ArrivalSink)
	if !m.cfg.Continuous.Arrival {
		arrival = nil
	}
	for {
		rec, err := out.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
		}
		c.pending = append(c.pending, rec)
		c.pendingB += recordBufferBytes(rec)
		c.outputRows.Add(rec.NumRows())
		if arrival != nil {
			if err := arrival.AddUncommitted(ctx, m.batchID, rec); err != nil {
				return false, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
			}
		}
	}
	copy(c.processed, ends)
	if arrival != nil {
		c.latencies = append(c.latencies, time.Since(noticed))
	} else {
		c.noticed = append(c.noticed, noticed)
	}
	return true, nil
}

// recordBufferBytes is the size of rec's buffers (shared buffers counted
// once per column; an estimate good enough for the pending bound).
func recordBufferBytes(rec arrow.Record) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += int64(col.Data().SizeInBytes())
	}
	return n
}

// endEpoch hands the open epoch to the committer and opens the next. An
// epoch that read nothing is not recorded; if nothing is being committed
// and the sources are idle, the trigger is reported idle. Unless forced
// (the pending bound, ProcessAllAvailable), an epoch does not end while
// the previous one is still committing: it grows instead, so that epochs
// adapt to the commit latency (a slow fsync) rather than stalling the
// pipeline.
func (c *continuousRun) endEpoch(ctx context.Context, force bool) error {
	m := c.m
	if !force && c.inflight > 0 {
		return nil
	}
	if slices.EqualFunc(c.processed, c.startOffsets, stream.Offset.Equal) {
		c.epochStart = time.Now()
		if c.inflight > 0 {
			return nil
		}
		idle, err := c.sourcesIdle(ctx)
		if err != nil || !idle {
			return err
		}
		now := m.cfg.Clock.Now()
		copy(m.available, m.committed)
		c.q.record(c.q.nextTrigger(), triggerResult{progress: m.idleProgress(now, 0, map[string]int64{})}, now)
		return nil
	}
	now := m.cfg.Clock.Now()
	ec := &epochCommit{
		id: m.batchID, start: c.startOffsets, end: slices.Clone(c.processed),
		pending: c.pending, outSchema: c.outSchema, inputRows: c.inputRows, outputRows: c.outputRows.Load(),
		noticed: c.noticed, latencies: c.latencies, epochStart: c.epochStart,
		epochEnd: time.Now(), clockStart: now, timestampMs: now.UnixMilli(),
	}
	c.pending, c.pendingB = nil, 0
	m.batchID++
	c.openEpoch()
	select {
	case c.toCommit <- ec:
		c.inflight++
	case <-ctx.Done():
		vector.ReleaseRecords(ec.pending)
		return ctx.Err()
	}
	return nil
}

// commit runs on the committer goroutine: the epoch's offsets, then its
// sink commit, then its commit record. It touches only the logs, the sink
// and the epoch, never the sources.
func (c *continuousRun) commit(ctx context.Context, ec *epochCommit) error {
	m := c.m
	ec.durations = map[string]int64{"processing": ec.epochEnd.Sub(ec.epochStart).Milliseconds()}
	timed := func(phase string, f func() error) error {
		t := time.Now()
		err := f()
		ec.durations[phase] += time.Since(t).Milliseconds()
		return err
	}
	defer func() {
		vector.ReleaseRecords(ec.pending)
		ec.pending = nil
	}()
	err := timed("walCommit", func() error {
		seq := checkpoint.OffsetSeq{BatchTimestampMs: ec.timestampMs, Conf: m.conf}
		for _, o := range ec.end {
			seq.Offsets = append(seq.Offsets, []byte(o))
		}
		ok, err := m.offsets.Add(ec.id, seq)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: offsets for epoch %d already exist in %s: is another query using this checkpoint concurrently?", ec.id, m.offsets.Dir())
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = timed("addBatch", func() error {
		schema := ec.outSchema
		if schema == nil {
			return fmt.Errorf("arrowstream: epoch %d has input but no output schema", ec.id)
		}
		scan, err := vector.NewScan(schema, ec.pending...)
		if err != nil {
			return err
		}
		return m.cfg.Sink.AddBatch(ctx, ec.id, scan)
	})
	if err != nil {
		return fmt.Errorf("arrowstream: epoch %d: %w", ec.id, err)
	}
	ec.committedAtW = time.Now()
	return timed("commitOffsets", func() error {
		ep := stream.EpochInfo{ID: ec.id, BatchTimestampMs: ec.timestampMs, CheckpointDir: m.cfg.CheckpointDir, NumPartitions: m.numPartitions()}
		if err := m.cfg.Exec.CommitState(ctx, ep); err != nil {
			return err
		}
		ok, err := m.commits.Add(ec.id, checkpoint.CommitMetadata{})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: commit for epoch %d already exists in %s: is another query using this checkpoint concurrently?", ec.id, m.commits.Dir())
		}
		if keep := int64(m.cfg.MinBatchesToRetain); keep > 0 && ec.id > keep {
			if err := m.offsets.Purge(ec.id - keep); err != nil {
				return err
			}
			if err := m.commits.Purge(ec.id - keep); err != nil {
				return err
			}
		}
		return nil
	})
}

// committed runs on the pipeline goroutine when the committer finished an
// epoch: sources may forget what it read, and its progress is published.
func (c *continuousRun) committed(ctx context.Context, ec *epochCommit) error {
	m := c.m
	c.inflight--
	if ec.err != nil {
		return ec.err
	}
	for i, src := range m.cfg.Sources {
		if ec.end[i] != nil {
			if err := src.Commit(ctx, ec.end[i]); err != nil {
				return fmt.Errorf("arrowstream: source %s: commit: %w", m.cfg.SourceDescriptions[i], err)
			}
		}
	}
	for _, t := range ec.noticed {
		ec.latencies = append(ec.latencies, ec.committedAtW.Sub(t))
	}
	copy(m.committed, ec.start)
	copy(m.available, ec.end)
	ep := stream.EpochInfo{ID: ec.id, BatchTimestampMs: ec.timestampMs}
	prog := m.batchProgress(ec.clockStart, ec.epochStart, ec.durations, ep, ec.inputRows, ec.outputRows)
	prog.Latency = latencySummary(ec.latencies)
	copy(m.committed, ec.end)
	m.ranBatch = true
	c.q.record(c.q.nextTrigger(), triggerResult{ran: true, progress: prog}, m.cfg.Clock.Now())
	return nil
}

// sourcesIdle reports whether no source has data beyond the open epoch's
// position.
func (c *continuousRun) sourcesIdle(ctx context.Context) (bool, error) {
	for i, src := range c.m.cfg.Sources {
		latest, err := src.LatestOffset(ctx)
		if err != nil {
			return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", c.m.cfg.SourceDescriptions[i], err)
		}
		if latest != nil && !latest.Equal(c.processed[i]) {
			return false, nil
		}
	}
	return true, nil
}

// latencySummary gives p50/p99/max of the epoch's processing latencies in
// milliseconds (fractional), nil when there are none.
func latencySummary(ls []time.Duration) map[string]float64 {
	if len(ls) == 0 {
		return nil
	}
	s := slices.Clone(ls)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return map[string]float64{"p50": at(0.5), "p99": at(0.99), "max": at(1)}
}
