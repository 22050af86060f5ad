package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// continuousPollInterval is how often a continuous query asks a source
// that cannot notify (NotifyingSource) for new data.
const continuousPollInterval = time.Millisecond

// DefaultContinuousMaxPendingBytes bounds the output a continuous query
// holds for its open epoch; reaching it commits the epoch early, so that a
// fast source cannot grow memory without bound (writer option
// "continuous.maxPendingBytes").
const DefaultContinuousMaxPendingBytes = 64 << 20

// ArrivalSink is a sink that can show rows before their epoch commits, as
// Spark's continuous memory sink does (writer option
// "continuous.visibility" = "arrival"). AddUncommitted consumes nothing:
// it retains what it keeps. The epoch's AddBatch later replaces the
// uncommitted rows with the committed ones; if the query fails first, the
// uncommitted rows are discarded (DiscardUncommitted) and the epoch is
// replayed on restart.
type ArrivalSink interface {
	Sink
	AddUncommitted(ctx context.Context, epoch int64, rec arrow.Record) error
	DiscardUncommitted()
}

// continuousConfig is the part of loopConfig only continuous queries use.
type continuousConfig struct {
	// stateful: the plan has an Update-mode aggregation, run once per
	// epoch over what arrived (checkContinuous).
	stateful bool
	// arrival: rows are shown as they are processed (ArrivalSink).
	arrival         bool
	maxPendingBytes int64
}

// continuousRun is the long-running pipeline of a continuous query over
// the micro-batch loop's checkpoint state: it processes data as it
// arrives, and every trigger interval writes the epoch's end offsets,
// commits the sink and writes the commit (SEMANTICS.md §10, DESIGN.md).
// An epoch so recorded is replayed exactly after a crash (its offsets are
// in the offset log before its sink commit), which makes the committed
// output exactly once.
type continuousRun struct {
	m *microBatch
	q *StreamingQuery

	processed  []Offset // how far the open epoch has read each source
	inputRows  []atomic.Int64
	outputRows atomic.Int64
	pending    []arrow.Record // the open epoch's output, owned
	pendingB   int64
	outSchema  *arrow.Schema
	epochStart time.Time       // wall time the open epoch started
	latencies  []time.Duration // per processing cycle: data noticed → visible
	noticed    []time.Time     // cycles of the open epoch waiting for commit visibility
}

// runContinuous runs the query until ctx ends or an error.
func (q *StreamingQuery) runContinuous(ctx context.Context, m *microBatch) error {
	if m.constructed {
		// The previous run wrote this epoch's offsets but not its commit:
		// replay it with exactly its recorded offsets.
		if err := q.runOneTrigger(ctx, m); err != nil {
			return err
		}
	}
	if m.cfg.continuous.stateful {
		return q.runContinuousStateful(ctx, m)
	}
	c := &continuousRun{m: m, q: q, inputRows: make([]atomic.Int64, len(m.cfg.sources))}
	c.openEpoch()
	defer c.releasePending()

	wake := make(chan struct{}, 1)
	poll := false
	for _, src := range m.cfg.sources {
		ns, ok := src.(NotifyingSource)
		if !ok {
			poll = true
			continue
		}
		go forwardNotifications(ctx, ns, wake)
	}
	ticks := make(chan struct{}, 1)
	go epochTicker(ctx, m.cfg.clock, m.cfg.trigger.interval, ticks)
	var pollC <-chan time.Time
	if poll {
		t := time.NewTicker(continuousPollInterval)
		defer t.Stop()
		pollC = t.C
	}
	flush := make(chan struct{}, 1)
	q.mu.Lock()
	q.flush = flush
	q.mu.Unlock()
	q.setStatus("Processing new data", true, true)
	for {
		if _, err := c.processAvailable(ctx); err != nil {
			return err
		}
		if c.pendingB >= m.cfg.continuous.maxPendingBytes {
			if err := c.commitEpoch(ctx); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-pollC:
		case <-ticks:
			if err := c.commitEpoch(ctx); err != nil {
				return err
			}
		case <-flush:
			// ProcessAllAvailable: end the open epoch now, and keep going
			// until the sources have nothing more, so that it returns once
			// what was available is committed.
			for {
				if _, err := c.processAvailable(ctx); err != nil {
					return err
				}
				if err := c.commitEpoch(ctx); err != nil {
					return err
				}
				idle, err := c.sourcesIdle(ctx)
				if err != nil {
					return err
				}
				if idle {
					break
				}
			}
		}
	}
}

// runOneTrigger runs one micro-batch trigger and publishes its progress.
func (q *StreamingQuery) runOneTrigger(ctx context.Context, m *microBatch) error {
	seq := q.nextTrigger()
	res, err := m.runTrigger(ctx)
	if err != nil {
		return err
	}
	q.record(seq, res, m.cfg.clock.Now())
	return nil
}

// nextTrigger starts a trigger for ProcessAllAvailable's bookkeeping.
func (q *StreamingQuery) nextTrigger() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.triggerSeq++
	return q.triggerSeq
}

// runContinuousStateful runs a continuous query with an Update-mode
// aggregation: its epochs are the trigger intervals, each processed as one
// batch with the state committed per epoch.
func (q *StreamingQuery) runContinuousStateful(ctx context.Context, m *microBatch) error {
	for {
		start := m.cfg.clock.Now()
		if err := q.runOneTrigger(ctx, m); err != nil {
			return err
		}
		q.setStatus("Waiting for data to arrive", false, false)
		interval := m.cfg.trigger.interval.Milliseconds()
		next := time.UnixMilli((start.UnixMilli()/interval)*interval + interval)
		if err := m.cfg.clock.WaitUntil(ctx, next); err != nil {
			return err
		}
	}
}

// forwardNotifications turns a source's arrival notifications into
// non-blocking sends on wake until ctx ends.
func forwardNotifications(ctx context.Context, src NotifyingSource, wake chan<- struct{}) {
	for {
		select {
		case <-src.DataAvailable():
			select {
			case wake <- struct{}{}:
			default:
			}
		case <-ctx.Done():
			return
		}
	}
}

// epochTicker sends on ticks at every multiple of interval on clock (a
// tick not yet taken is not doubled).
func epochTicker(ctx context.Context, clock Clock, interval time.Duration, ticks chan<- struct{}) {
	ms := max(interval.Milliseconds(), 1)
	for {
		now := clock.Now().UnixMilli()
		next := time.UnixMilli((now/ms)*ms + ms)
		if err := clock.WaitUntil(ctx, next); err != nil {
			return
		}
		select {
		case ticks <- struct{}{}:
		default:
		}
	}
}

func (c *continuousRun) openEpoch() {
	c.processed = slices.Clone(c.m.committed)
	c.epochStart = time.Now()
	for i := range c.inputRows {
		c.inputRows[i].Store(0)
	}
	c.outputRows.Store(0)
	c.latencies = c.latencies[:0]
	c.noticed = c.noticed[:0]
}

func (c *continuousRun) releasePending() {
	releaseRecords(c.pending)
	c.pending, c.pendingB = nil, 0
	if as, ok := c.m.cfg.sink.(ArrivalSink); ok && c.m.cfg.continuous.arrival {
		as.DiscardUncommitted()
	}
}

// processAvailable reads what every source has beyond the open epoch's
// position, runs the pipeline over it and keeps (and, with arrival
// visibility, shows) the output. It reports whether there was data.
func (c *continuousRun) processAvailable(ctx context.Context) (bool, error) {
	m := c.m
	noticed := time.Now()
	inputs := make([]vector.Operator, len(m.cfg.sources))
	ends := make([]Offset, len(m.cfg.sources))
	closeInputs := func() {
		for _, in := range inputs {
			if in != nil {
				in.Close()
			}
		}
	}
	any := false
	for i, src := range m.cfg.sources {
		latest, err := src.LatestOffset(ctx)
		if err != nil {
			closeInputs()
			return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.sourceDescriptions[i], err)
		}
		m.latest[i] = latest
		end := latest
		if ac, ok := src.(AdmissionControlSource); ok {
			if end, err = ac.LatestOffsetFrom(ctx, c.processed[i]); err != nil {
				closeInputs()
				return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.sourceDescriptions[i], err)
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
			return false, fmt.Errorf("arrowstream: source %s: read (%s, %s]: %w", m.cfg.sourceDescriptions[i], c.processed[i], end, err)
		}
		inputs[i] = &countingOperator{Operator: op, rows: &c.inputRows[i]}
		ends[i] = end
		any = true
	}
	if !any {
		closeInputs()
		return false, nil
	}
	ep := EpochInfo{
		ID:               m.batchID,
		BatchTimestampMs: m.cfg.clock.Now().UnixMilli(),
		CheckpointDir:    m.cfg.checkpointDir,
		NumPartitions:    m.numPartitions(),
	}
	out, err := m.cfg.exec.Execute(ctx, ep, inputs)
	if err != nil {
		return false, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
	}
	defer out.Close()
	c.outSchema = out.Schema()
	arrival, _ := m.cfg.sink.(ArrivalSink)
	if !m.cfg.continuous.arrival {
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

// commitEpoch ends the open epoch: its end offsets go to the offset log,
// its output to the sink, then the commit log; sources may then forget
// what it read. An epoch that read nothing is not recorded.
func (c *continuousRun) commitEpoch(ctx context.Context) error {
	m, q := c.m, c.q
	seqNo := q.nextTrigger()
	start := m.cfg.clock.Now()
	wallStart := c.epochStart
	durations := map[string]int64{"processing": time.Since(c.epochStart).Milliseconds()}
	timed := func(phase string, f func() error) error {
		t := time.Now()
		err := f()
		durations[phase] += time.Since(t).Milliseconds()
		return err
	}
	empty := true
	for i := range c.processed {
		if !c.processed[i].Equal(m.committed[i]) {
			empty = false
		}
	}
	if empty {
		c.epochStart = time.Now()
		idle, err := c.sourcesIdle(ctx)
		if err != nil || !idle {
			return err
		}
		q.record(seqNo, triggerResult{progress: m.idleProgress(start, time.Now(), durations)}, m.cfg.clock.Now())
		return nil
	}
	m.batchTimestampMs = start.UnixMilli()
	copy(m.available, c.processed)
	err := timed("walCommit", func() error {
		seq := checkpoint.OffsetSeq{BatchTimestampMs: m.batchTimestampMs, Conf: m.conf}
		for _, o := range m.available {
			seq.Offsets = append(seq.Offsets, []byte(o))
		}
		ok, err := m.offsets.Add(m.batchID, seq)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: offsets for epoch %d already exist in %s: is another query using this checkpoint concurrently?", m.batchID, m.offsets.Log().Dir())
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = timed("addBatch", func() error {
		scan, err := vector.NewScan(c.outSchema, c.pending...)
		if err != nil {
			return err
		}
		releaseRecords(c.pending)
		c.pending, c.pendingB = nil, 0
		return m.cfg.sink.AddBatch(ctx, m.batchID, scan)
	})
	if err != nil {
		return fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
	}
	visible := time.Now()
	for _, t := range c.noticed {
		c.latencies = append(c.latencies, visible.Sub(t))
	}
	ep := EpochInfo{ID: m.batchID, BatchTimestampMs: m.batchTimestampMs, CheckpointDir: m.cfg.checkpointDir, NumPartitions: m.numPartitions()}
	err = timed("commitOffsets", func() error {
		if err := m.cfg.exec.CommitState(ctx, ep); err != nil {
			return err
		}
		ok, err := m.commits.Add(m.batchID, checkpoint.CommitMetadata{})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: commit for epoch %d already exists in %s: is another query using this checkpoint concurrently?", m.batchID, m.commits.Log().Dir())
		}
		for i, src := range m.cfg.sources {
			if m.available[i] != nil {
				if err := src.Commit(ctx, m.available[i]); err != nil {
					return fmt.Errorf("arrowstream: source %s: commit: %w", m.cfg.sourceDescriptions[i], err)
				}
			}
		}
		if keep := int64(m.cfg.minBatchesToRetain); keep > 0 && m.batchID > keep {
			if err := m.offsets.Log().Purge(m.batchID - keep); err != nil {
				return err
			}
			if err := m.commits.Log().Purge(m.batchID - keep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	prog := m.batchProgress(start, wallStart, durations, ep, c.inputRows, c.outputRows.Load())
	prog.Latency = latencySummary(c.latencies)
	copy(m.committed, m.available)
	m.batchID++
	m.ranBatch = true
	q.record(seqNo, triggerResult{ran: true, progress: prog}, m.cfg.clock.Now())
	c.openEpoch()
	// As ProcessAllAvailable expects: a trigger that finds nothing new
	// after everything read so far is committed.
	if idle, err := c.sourcesIdle(ctx); err != nil {
		return err
	} else if idle {
		q.record(q.nextTrigger(), triggerResult{}, m.cfg.clock.Now())
	}
	return nil
}

// sourcesIdle reports whether no source has data beyond the open epoch's
// position.
func (c *continuousRun) sourcesIdle(ctx context.Context) (bool, error) {
	for i, src := range c.m.cfg.sources {
		latest, err := src.LatestOffset(ctx)
		if err != nil {
			return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", c.m.cfg.sourceDescriptions[i], err)
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
