package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// pollingDelay is how long an idle ProcessingTime(0) query sleeps (real
// time, as Spark's pollingDelay) before asking its sources again.
const pollingDelay = 10 * time.Millisecond

// idleFlushDelay: an idle loop makes the last epoch's commit record
// (staged to ride with the next epoch's write, commitWithNext) durable
// once no next epoch has come for this long, not at the first idle poll:
// a query fed every few milliseconds then pays one fdatasync per epoch
// instead of two. A query whose epochs come at longer intervals waits
// longer (idleFlusher: twice the interval, at most maxIdleFlushDelay).
// Until then a crash re-runs that epoch, which the epoch-idempotent sink
// discards; a stop flushes it at once.
const idleFlushDelay = 50 * time.Millisecond

// Config is everything the micro-batch and continuous loops need.
type Config struct {
	CheckpointDir      string
	Sources            []stream.Source
	SourceDescriptions []string
	Sink               stream.Sink
	SinkDescription    string
	Exec               Executor
	Trigger            Trigger
	Clock              Clock
	Conf               map[string]string // settings to freeze for a new checkpoint
	MinBatchesToRetain int
	NoDataBatches      bool
	Writer             *checkpoint.Writer
	Logger             *slog.Logger
	Faults             FaultInjector // test hook, nil in production
	Continuous         ContinuousConfig
	// OnStop, when set, runs after the query ends (nil error: clean stop).
	OnStop func(err error)
	// CloseSink, when set, releases a format-created ClosingSink once the
	// query ends (CloseSinkFunc).
	CloseSink func()
	// Restart says whether a failure restarts the query from its
	// checkpoint (RestartOptions); the zero value ends it.
	Restart RestartPolicy
	// Unlock, when set, releases the checkpoint's single-writer lock
	// (checkpoint.LockWriter) once the query has ended: after its state
	// and sink are closed, before OnStop (which may remove the
	// checkpoint), so that a start after Stop returns finds it free.
	Unlock func()
}

// microBatch is the state of one run of the micro-batch loop
// (MicroBatchExecution).
type microBatch struct {
	cfg     Config
	q       *Query
	offsets *checkpoint.OffsetLog
	commits *checkpoint.CommitLog
	// commitWithNext: the sink is idempotent by epoch id, so an epoch's
	// commit record rides with the next epoch's offsets record (one
	// durable write per epoch; checkpoint.OpenEpochLogs has the argument).
	commitWithNext bool
	// idleFlush decides when the idle loop writes the last staged commit
	// record (commitWithNext) without waiting further for the next epoch.
	idleFlush idleFlusher
	// seqOffsets is writeOffsets' list of the sources' offsets, kept for
	// the next epoch: the log encodes the list and keeps only the
	// encoding, so the list was an epoch's allocation for nothing.
	seqOffsets []json.RawMessage

	batchID     int64
	committed   []stream.Offset // start offsets of the current batch
	available   []stream.Offset // end offsets of the current batch
	constructed bool            // offsets/<batchID> is written (or staged)
	// planStaged: the current batch's offsets record is staged, to be
	// written with its state record (one fdatasync); nothing of the batch
	// is visible, and sources are not told to forget, before it is
	// durable (planDurable).
	planStaged bool
	latest     []stream.Offset // what sources reported, for progress

	batchTimestampMs int64
	batchWatermarkMs int64
	lateWatermarkMs  int64
	conf             map[string]string
	tracker          *watermarkTracker
	ranBatch         bool // a batch ran in this run (enables no-data batches)

	availableNowTargets []stream.Offset
	lastTriggerStart    time.Time

	// Kept from trigger to trigger so that an epoch allocates no more of
	// them: the sources' wake channels, the idle wait's timer.
	wake      []<-chan struct{}
	idleTimer *time.Timer
	// Also kept: the sources' row counters and operators of an epoch, the
	// idle trigger's report.
	inputRows []atomic.Int64
	inputs    []vector.Operator
	idle      idleReport
}

func newMicroBatch(cfg Config, q *Query) (*microBatch, error) {
	offsets, commits, err := checkpoint.OpenEpochLogs(cfg.CheckpointDir, cfg.Writer)
	if err != nil {
		return nil, err
	}
	sweepStaleTempsOnLock(q.runCtx, offsets, cfg.CheckpointDir, cfg.Logger)
	_, idem := cfg.Sink.(stream.EpochIdempotentSink)
	if idem {
		idem = cfg.Sink.(stream.EpochIdempotentSink).EpochIdempotent()
	}
	return &microBatch{cfg: cfg, q: q, offsets: offsets, commits: commits, commitWithNext: idem, idleFlush: idleFlusher{base: idleFlushDelay}}, nil
}

// closeLogs writes a commit record still waiting for the next epoch and
// releases the logs' files: a run of the loop ends.
func (m *microBatch) closeLogs() error {
	return m.commits.Close()
}

// populateStartOffsets decides where this run starts (docs/semantics.md §2.2).
func (m *microBatch) populateStartOffsets() error {
	n := len(m.cfg.Sources)
	m.committed = make([]stream.Offset, n)
	m.available = make([]stream.Offset, n)
	m.latest = make([]stream.Offset, n)
	if sm, ok := m.cfg.Exec.(stateLogMarker); ok {
		if err := sm.UseEpochLog(m.offsets.SegmentLog()); err != nil {
			return err
		}
	}
	for i, src := range m.cfg.Sources {
		if cs, ok := src.(stream.CheckpointedSource); ok {
			if err := cs.SetCheckpointDir(filepath.Join(m.cfg.CheckpointDir, "sources", strconv.Itoa(i))); err != nil {
				return fmt.Errorf("arrowstream: source %s: %w", m.cfg.SourceDescriptions[i], err)
			}
		}
		if is, ok := src.(stream.InitialOffsetSource); ok {
			m.committed[i] = is.InitialOffset()
		}
	}
	last, seq, ok, err := m.offsets.Latest()
	if err != nil {
		return err
	}
	if !ok {
		m.batchID = 0
		m.conf = copyConf(m.cfg.Conf)
		setStatePartitioning(m.conf, nil, false)
		setSubplanSharing(m.conf, nil, false)
		setJoinInputPruning(m.conf, nil, false)
		policy, err := ParseWatermarkPolicy(m.conf[stream.ConfWatermarkPolicy])
		if err != nil {
			return err
		}
		m.tracker = newWatermarkTracker(policy, 0)
		return nil
	}
	if len(seq.Offsets) != n {
		return fmt.Errorf("arrowstream: there are [%d] sources in the checkpoint offsets and now there are [%d] sources requested by the query. Cannot continue", len(seq.Offsets), n)
	}
	for i, o := range seq.Offsets {
		m.available[i] = stream.Offset(o)
	}
	if err := resumeSources(m.cfg.Sources, m.cfg.SourceDescriptions, m.available); err != nil {
		return err
	}
	prevWatermark := int64(0)
	if last > 0 {
		prev, ok, err := m.offsets.Get(last - 1)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: batch %d doesn't exist in %s (the offset log must be contiguous)", last-1, m.offsets.Dir())
		}
		for i, o := range prev.Offsets {
			m.committed[i] = stream.Offset(o)
		}
		prevWatermark = prev.BatchWatermarkMs
	}
	// Persisted settings win over the session's; the state store provider
	// must not change under existing state.
	if err := checkStateProvider(m.cfg.CheckpointDir, m.q.recordsState, seq.Conf[stream.ConfStateStoreProvider], m.cfg.Conf[stream.ConfStateStoreProvider]); err != nil {
		return err
	}
	m.conf = copyConf(m.cfg.Conf)
	for k, v := range seq.Conf {
		m.conf[k] = v
	}
	keepStateTuning(m.conf, m.cfg.Conf)
	setStatePartitioning(m.conf, seq.Conf, true)
	setSubplanSharing(m.conf, seq.Conf, true)
	setJoinInputPruning(m.conf, seq.Conf, true)
	policy, err := ParseWatermarkPolicy(m.conf[stream.ConfWatermarkPolicy])
	if err != nil {
		return err
	}
	m.tracker = newWatermarkTracker(policy, seq.BatchWatermarkMs)
	m.batchTimestampMs = seq.BatchTimestampMs
	m.batchWatermarkMs = seq.BatchWatermarkMs
	m.lateWatermarkMs = prevWatermark

	lastCommit, commit, cok, err := m.commits.Latest()
	if err != nil {
		return err
	}
	if sm, ok := m.cfg.Exec.(stateLogMarker); ok && cok {
		sm.ExpectStateLog(commit.StateLog)
	}
	switch {
	case cok && lastCommit == last:
		// Batch `last` completed: move on.
		m.batchID = last + 1
		copy(m.committed, m.available)
		m.lateWatermarkMs = seq.BatchWatermarkMs
		if commit.NextBatchWatermarkMs > m.tracker.global {
			m.tracker.global = commit.NextBatchWatermarkMs
		}
	case cok && lastCommit > last:
		return fmt.Errorf("arrowstream: checkpoint %s is inconsistent: commits has batch %d but offsets ends at %d (%s is missing): %w",
			m.cfg.CheckpointDir, lastCommit, last, m.offsets.EntryName(lastCommit), checkpoint.ErrCorrupt)
	default:
		// Re-run batch `last` with exactly its recorded offsets, timestamp
		// and watermark.
		if cok && lastCommit < last-1 {
			m.cfg.Logger.Warn("commit log is behind the offset log by more than one batch", "commits", lastCommit, "offsets", last)
		}
		m.batchID = last
		m.constructed = true
	}
	return nil
}

func copyConf(c map[string]string) map[string]string {
	out := make(map[string]string, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// numPartitions returns the frozen number of state partitions.
func (m *microBatch) numPartitions() int {
	n, err := strconv.Atoi(m.conf[stream.ConfShufflePartitions])
	if err != nil || n <= 0 {
		return 1
	}
	return n
}

// triggerResult says what one trigger did.
type triggerResult struct {
	ran      bool
	progress *stream.StreamingQueryProgress
	// idle, for a trigger that found nothing to do, holds what its report
	// is built from: Query.record builds it (idleReport.build) only when
	// it publishes it, at most every noDataProgressInterval, while
	// ProcessAllAvailable makes an idle trigger after every epoch.
	idle *idleReport
}

// idleReport is an idle trigger's report before it is built.
type idleReport struct {
	m                *microBatch
	start, wallStart time.Time
	elapsed          time.Duration
	clock            phaseClock
}

// build returns the idle trigger's progress report.
func (r *idleReport) build() *stream.StreamingQueryProgress {
	return r.m.idleProgress(r.start, r.elapsed, r.clock.durations())
}

// The phases of a trigger, as its report's durationMs names them.
const (
	phaseLatestOffset = iota
	phaseWalCommit
	phaseGetBatch
	phaseQueryPlanning
	phaseAddBatch
	phaseCommitOffsets
	numPhases
)

var phaseNames = [numPhases]string{"latestOffset", "walCommit", "getBatch", "queryPlanning", "addBatch", "commitOffsets"}

// phaseClock times a trigger's phases (ms, summed per phase), for its
// report's durationMs. A method pair instead of a closure per phase (the
// closures and the variables they captured were a tenth of an empty
// epoch's allocations), and an array instead of a map: the map is built
// only for a report that is published (durations), so an idle trigger,
// which follows every epoch of ProcessAllAvailable and is reported at
// most every noDataProgressInterval, allocates none (its map and the
// map's group were a tenth of an empty epoch's bytes, on fresh pages).
type phaseClock struct {
	ms  [numPhases]int64
	ran [numPhases]bool
	t   time.Time
}

func (c *phaseClock) start() { c.t = time.Now() }

func (c *phaseClock) end(phase int) {
	c.ms[phase] += time.Since(c.t).Milliseconds()
	c.ran[phase] = true
}

// durations returns the phases that ran, with room for the report's
// triggerExecution.
func (c *phaseClock) durations() map[string]int64 {
	n := 1
	for _, r := range c.ran {
		if r {
			n++
		}
	}
	d := make(map[string]int64, n)
	for i, r := range c.ran {
		if r {
			d[phaseNames[i]] = c.ms[i]
		}
	}
	return d
}

// runTrigger runs one trigger: construct the next batch if needed, then run
// it (docs/semantics.md §2.3).
func (m *microBatch) runTrigger(ctx context.Context) (triggerResult, error) {
	start := m.cfg.Clock.Now()
	wallStart := time.Now()
	var clock phaseClock
	if !m.constructed {
		clock.start()
		isNew, err := m.latestOffsets(ctx)
		clock.end(phaseLatestOffset)
		if err != nil {
			return triggerResult{}, err
		}
		another := m.cfg.NoDataBatches && m.ranBatch && m.cfg.Trigger.Kind != TriggerOnce &&
			m.cfg.Exec.ShouldRunAnotherBatch(m.tracker.global)
		if !isNew && !another {
			// Idle: the last epoch's commit record waits for no next
			// epoch, once a next epoch is overdue (idleFlusher).
			if m.commits.Pending() && m.idleFlush.due(time.Now()) {
				if err := m.commits.Flush(); err != nil {
					return triggerResult{}, err
				}
			}
			copy(m.available, m.committed)
			m.idle = idleReport{m: m, start: start, wallStart: wallStart, elapsed: time.Since(wallStart), clock: clock}
			return triggerResult{idle: &m.idle}, nil
		}
		m.batchTimestampMs = m.cfg.Clock.Now().UnixMilli()
		m.lateWatermarkMs = m.batchWatermarkMs
		if m.batchID == 0 {
			m.lateWatermarkMs = 0
		}
		m.batchWatermarkMs = m.tracker.global
		clock.start()
		err = m.writeOffsets(ctx)
		clock.end(phaseWalCommit)
		if err != nil {
			return triggerResult{}, err
		}
		m.constructed = true
	}
	return m.runBatch(ctx, start, wallStart, &clock)
}

// latestOffsets asks every source for its latest offset and the end of
// the next batch (m.latest, m.available), and reports whether any has
// data past what was committed.
func (m *microBatch) latestOffsets(ctx context.Context) (isNew bool, err error) {
	for i, src := range m.cfg.Sources {
		latest, err := src.LatestOffset(ctx)
		if err != nil {
			return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.SourceDescriptions[i], err)
		}
		m.latest[i] = latest
		end := latest
		if ac, ok := src.(stream.AdmissionControlSource); ok && m.cfg.Trigger.Kind != TriggerOnce {
			if end, err = ac.LatestOffsetFrom(ctx, m.committed[i]); err != nil {
				return false, fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.SourceDescriptions[i], err)
			}
		}
		if m.availableNowTargets != nil {
			end = m.availableNowTargets[i]
		}
		m.available[i] = end
		if end != nil && !end.Equal(m.committed[i]) {
			isNew = true
		}
	}
	return isNew, nil
}

// writeOffsets writes (or stages, stageOffsets) the batch's offsets record.
func (m *microBatch) writeOffsets(ctx context.Context) error {
	seq := checkpoint.OffsetSeq{BatchWatermarkMs: m.batchWatermarkMs, BatchTimestampMs: m.batchTimestampMs, Conf: m.conf,
		Offsets: m.seqOffsets[:0]}
	for _, o := range m.available {
		seq.Offsets = append(seq.Offsets, []byte(o))
	}
	add := m.offsets.Add
	m.planStaged = m.stageOffsets()
	if m.planStaged {
		add = m.offsets.Stage
	}
	ok, err := add(m.batchID, seq)
	// Add and Stage keep the encoded body, not seq: the list is reset
	// for the next epoch, its offsets dropped.
	clear(seq.Offsets)
	m.seqOffsets = seq.Offsets[:0]
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("arrowstream: offsets for batch %d already exist in %s: is another query using this checkpoint concurrently?", m.batchID, m.offsets.Dir())
	}
	if m.planStaged {
		return nil
	}
	return m.planDurable(ctx)
}

// runBatch executes the constructed batch, commits it to the sink, the
// state and the commit log.
func (m *microBatch) runBatch(ctx context.Context, start, wallStart time.Time, clock *phaseClock) (triggerResult, error) {
	ep := stream.EpochInfo{
		ID:               m.batchID,
		BatchTimestampMs: m.batchTimestampMs,
		WatermarkMs:      m.batchWatermarkMs,
		LateWatermarkMs:  m.lateWatermarkMs,
		HasWatermark:     len(m.cfg.Exec.WatermarkNodes()) > 0,
		CheckpointDir:    m.cfg.CheckpointDir,
		NumPartitions:    m.numPartitions(),
		Conf:             m.conf,
	}
	// The counters and the inputs' slice serve every epoch of the run:
	// the epoch's operators are done with them when runBatch returns.
	n := len(m.cfg.Sources)
	if len(m.inputRows) != n {
		m.inputRows, m.inputs = make([]atomic.Int64, n), make([]vector.Operator, n)
	}
	inputRows, inputs := m.inputRows, m.inputs
	for i := range inputRows {
		inputRows[i].Store(0)
		inputs[i] = nil
	}
	clock.start()
	err := m.readInputs(ctx, inputs, inputRows)
	clock.end(phaseGetBatch)
	if err != nil {
		for _, in := range inputs {
			if in != nil {
				in.Close()
			}
		}
		return triggerResult{}, err
	}
	clock.start()
	out, err := m.cfg.Exec.Execute(ctx, ep, inputs)
	clock.end(phaseQueryPlanning)
	clear(inputs) // Execute owns them now, even on error
	if err != nil {
		m.cfg.Exec.AbortState(ep)
		return triggerResult{}, err
	}
	if m.cfg.Faults != nil {
		if out, err = m.injectFault(ctx, out, inputRows); err != nil {
			m.cfg.Exec.AbortState(ep)
			return triggerResult{}, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
		}
	}
	clock.start()
	outputRows, err := m.addBatch(ctx, ep, out)
	clock.end(phaseAddBatch)
	if err != nil {
		m.cfg.Exec.AbortState(ep)
		return triggerResult{}, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
	}
	clock.start()
	err = m.commitBatch()
	clock.end(phaseCommitOffsets)
	if err != nil {
		return triggerResult{}, err
	}
	prog := m.batchProgress(start, wallStart, clock.durations(), ep, inputRows, outputRows)
	copy(m.committed, m.available)
	m.batchID++
	m.constructed = false
	m.ranBatch = true
	return triggerResult{ran: true, progress: prog}, nil
}

// readInputs sets inputs[i] to source i's data of the batch, counting its
// rows into inputRows[i]. On error the inputs set so far are the caller's
// to close.
func (m *microBatch) readInputs(ctx context.Context, inputs []vector.Operator, inputRows []atomic.Int64) error {
	for i, src := range m.cfg.Sources {
		var op vector.Operator
		if m.available[i] != nil && !m.available[i].Equal(m.committed[i]) {
			var err error
			op, err = src.Read(ctx, m.committed[i], m.available[i])
			if err != nil {
				return fmt.Errorf("arrowstream: source %s: read (%s, %s]: %w", m.cfg.SourceDescriptions[i], m.committed[i], m.available[i], err)
			}
		} else {
			op = emptyInput(src.Schema())
		}
		inputs[i] = &countingOperator{Operator: op, rows: &inputRows[i]}
	}
	return nil
}

// addBatch commits the epoch's state (a stateful query) and hands its
// output to the sink, returning how many rows the sink took.
func (m *microBatch) addBatch(ctx context.Context, ep stream.EpochInfo, out vector.Operator) (int64, error) {
	// State is committed before the sink sees the epoch (Spark
	// commits it inside the tasks of the sink's job): the output is
	// drained first, so that every state read and write of the epoch
	// has happened, and dropped when any failed. A failure after the
	// state commit re-runs the epoch from the version it read.
	if m.cfg.Exec.HasState() {
		var err error
		if out, err = commitStateFirst(ctx, m.cfg.Exec, ep, out); err != nil {
			return 0, err
		}
	}
	if m.planStaged {
		// The state commit wrote the staged offsets record with
		// its state record; flush it when it did not (a provider
		// without the epoch log's state records).
		err := m.offsets.SegmentLog().Flush()
		if err == nil {
			m.planStaged = false
			err = m.planDurable(ctx)
		}
		if err != nil {
			out.Close()
			return 0, err
		}
	}
	counted := &countedOutput{}
	counted.Operator, counted.countingOperator.rows = out, &counted.rows
	err := m.cfg.Sink.AddBatch(ctx, m.batchID, counted)
	return counted.rows.Load(), err
}

// countedOutput is the sink's input with its row counter, one allocation.
type countedOutput struct {
	countingOperator
	rows atomic.Int64
}

// commitBatch writes the batch's commit record (or stages it to ride with
// the next epoch's write, commitWithNext).
func (m *microBatch) commitBatch() error {
	m.tracker.observe(m.cfg.Exec.WatermarkNodes(), sourceEventTime(m.cfg.Sources, m.cfg.Exec.EventTimeStats()))
	add := m.commits.Add
	if m.commitWithNext {
		add = m.commits.AddWithNext
	}
	meta := checkpoint.CommitMetadata{NextBatchWatermarkMs: m.tracker.global}
	if sm, ok := m.cfg.Exec.(stateLogMarker); ok {
		meta.StateLog = sm.StateLogEnd()
	}
	ok, err := add(m.batchID, meta)
	if err != nil {
		return err
	}
	m.idleFlush.staged(time.Now())
	if !ok {
		return fmt.Errorf("arrowstream: commit for batch %d already exists in %s: is another query using this checkpoint concurrently?", m.batchID, m.commits.Dir())
	}
	return nil
}

// stageOffsets says whether the batch's offsets record can wait for the
// batch's state record (one durable write for both): for a stateful
// query on a v2 epoch log, unless a source asks for its plan durable
// before it is read (stream.DurablePlanSource). Re-planning a batch whose offsets record a
// crash lost is safe because nothing of the batch is visible or
// committed before that write: sources are told to forget only after it
// (planDurable), and the state and the sink see the batch later still.
func (m *microBatch) stageOffsets() bool {
	if !m.cfg.Exec.HasState() || m.offsets.SegmentLog() == nil {
		return false
	}
	for _, src := range m.cfg.Sources {
		if d, ok := src.(stream.DurablePlanSource); ok && d.DurablePlan() {
			return false
		}
	}
	return true
}

// planDurable runs once the batch's offsets record is durable (and with
// it the previous batch's commit record): sources may forget the data
// of earlier batches, and retention may drop old epochs.
func (m *microBatch) planDurable(ctx context.Context) error {
	for i, src := range m.cfg.Sources {
		if m.committed[i] != nil {
			if err := src.Commit(ctx, m.committed[i]); err != nil {
				return fmt.Errorf("arrowstream: source %s: commit: %w", m.cfg.SourceDescriptions[i], err)
			}
		}
	}
	if keep := int64(m.cfg.MinBatchesToRetain); keep > 0 && m.batchID > keep {
		if err := m.offsets.Purge(m.batchID - keep); err != nil {
			return err
		}
		if err := m.commits.Purge(m.batchID - keep); err != nil {
			return err
		}
	}
	return nil
}

// errStopped marks the end of a query by Stop (not a failure).
var errStopped = errors.New("query stopped")

// commitStateFirst drains the epoch's output, commits the state and
// returns the output to replay to the sink. On error the output is
// released and the state aborted.
func commitStateFirst(ctx context.Context, exec Executor, ep stream.EpochInfo, out vector.Operator) (vector.Operator, error) {
	schema := out.Schema()
	recs, err := vector.Drain(ctx, out)
	out.Close()
	if err != nil {
		return nil, err
	}
	if err := exec.CommitState(ctx, ep); err != nil {
		vector.ReleaseRecords(recs)
		return nil, err
	}
	return vector.NewOwnedScan(schema, recs), nil
}
