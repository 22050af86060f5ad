package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Keys of the settings frozen in the offset log: a restarted query takes
// them from its checkpoint, not from the new session.
const (
	ConfShufflePartitions = "spark.sql.shuffle.partitions"
	ConfWatermarkPolicy   = "spark.sql.streaming.multipleWatermarkPolicy"
	ConfStateProvider     = "spark.sql.streaming.stateStore.providerClass"
	ConfAggStateFormat    = "spark.sql.streaming.aggregation.stateFormatVersion"
)

// pollingDelay is how long an idle ProcessingTime(0) query sleeps (real
// time, as Spark's pollingDelay) before asking its sources again.
const pollingDelay = 10 * time.Millisecond

// loopConfig is everything the micro-batch loop needs.
type loopConfig struct {
	checkpointDir      string
	sources            []Source
	sourceDescriptions []string
	sink               Sink
	sinkDescription    string
	exec               executor
	trigger            Trigger
	clock              Clock
	conf               map[string]string // settings to freeze for a new checkpoint
	minBatchesToRetain int
	noDataBatches      bool
	writer             *checkpoint.Writer
	logger             *slog.Logger
	faults             FaultInjector // test hook, nil in production
	continuous         continuousConfig
	// onStop, when set, runs after the query ends (nil error: clean stop).
	onStop func(err error)
	// closeSink, when set, releases a format-created ClosingSink once the
	// query ends (sink_lifecycle.go).
	closeSink func()
}

// microBatch is the state of one run of the micro-batch loop
// (MicroBatchExecution).
type microBatch struct {
	cfg     loopConfig
	q       *StreamingQuery
	offsets *checkpoint.OffsetLog
	commits *checkpoint.CommitLog

	batchID     int64
	committed   []Offset // start offsets of the current batch
	available   []Offset // end offsets of the current batch
	constructed bool     // offsets/<batchID> is written
	latest      []Offset // what sources reported, for progress

	batchTimestampMs int64
	batchWatermarkMs int64
	lateWatermarkMs  int64
	conf             map[string]string
	tracker          *watermarkTracker
	ranBatch         bool // a batch ran in this run (enables no-data batches)

	availableNowTargets []Offset
	lastTriggerStart    time.Time
}

func newMicroBatch(cfg loopConfig, q *StreamingQuery) (*microBatch, error) {
	offsets, err := checkpoint.OpenOffsetLog(cfg.checkpointDir, cfg.writer)
	if err != nil {
		return nil, err
	}
	commits, err := checkpoint.OpenCommitLog(cfg.checkpointDir, cfg.writer)
	if err != nil {
		return nil, err
	}
	return &microBatch{cfg: cfg, q: q, offsets: offsets, commits: commits}, nil
}

// populateStartOffsets decides where this run starts (SEMANTICS.md §2.2).
func (m *microBatch) populateStartOffsets() error {
	n := len(m.cfg.sources)
	m.committed = make([]Offset, n)
	m.available = make([]Offset, n)
	m.latest = make([]Offset, n)
	for i, src := range m.cfg.sources {
		if cs, ok := src.(CheckpointedSource); ok {
			if err := cs.SetCheckpointDir(filepath.Join(m.cfg.checkpointDir, "sources", strconv.Itoa(i))); err != nil {
				return fmt.Errorf("arrowstream: source %s: %w", m.cfg.sourceDescriptions[i], err)
			}
		}
		if is, ok := src.(InitialOffsetSource); ok {
			m.committed[i] = is.InitialOffset()
		}
	}
	last, seq, ok, err := m.offsets.Latest()
	if err != nil {
		return err
	}
	if !ok {
		m.batchID = 0
		m.conf = copyConf(m.cfg.conf)
		policy, err := ParseWatermarkPolicy(m.conf[ConfWatermarkPolicy])
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
		m.available[i] = Offset(o)
	}
	prevWatermark := int64(0)
	if last > 0 {
		prev, ok, err := m.offsets.Get(last - 1)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: batch %d doesn't exist in %s (the offset log must be contiguous)", last-1, m.offsets.Log().Dir())
		}
		for i, o := range prev.Offsets {
			m.committed[i] = Offset(o)
		}
		prevWatermark = prev.BatchWatermarkMs
	}
	// Persisted settings win over the session's; the state store provider
	// must not change under existing state.
	if err := checkStateProvider(m.cfg.checkpointDir, seq.Conf[ConfStateStoreProvider], m.cfg.conf[ConfStateStoreProvider]); err != nil {
		return err
	}
	m.conf = copyConf(m.cfg.conf)
	for k, v := range seq.Conf {
		m.conf[k] = v
	}
	keepStateTuning(m.conf, m.cfg.conf)
	policy, err := ParseWatermarkPolicy(m.conf[ConfWatermarkPolicy])
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
			m.cfg.checkpointDir, lastCommit, last, filepath.Join(m.offsets.Log().Dir(), strconv.FormatInt(lastCommit, 10)), checkpoint.ErrCorrupt)
	default:
		// Re-run batch `last` with exactly its recorded offsets, timestamp
		// and watermark.
		if cok && lastCommit < last-1 {
			m.cfg.logger.Warn("commit log is behind the offset log by more than one batch", "commits", lastCommit, "offsets", last)
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
	n, err := strconv.Atoi(m.conf[ConfShufflePartitions])
	if err != nil || n <= 0 {
		return 1
	}
	return n
}

// triggerResult says what one trigger did.
type triggerResult struct {
	ran      bool
	progress *StreamingQueryProgress
}

// runTrigger runs one trigger: construct the next batch if needed, then run
// it (SEMANTICS.md §2.3).
func (m *microBatch) runTrigger(ctx context.Context) (triggerResult, error) {
	start := m.cfg.clock.Now()
	wallStart := time.Now()
	durations := map[string]int64{}
	timed := func(phase string, f func() error) error {
		t := time.Now()
		err := f()
		durations[phase] += time.Since(t).Milliseconds()
		return err
	}
	if !m.constructed {
		var isNew bool
		err := timed("latestOffset", func() error {
			for i, src := range m.cfg.sources {
				latest, err := src.LatestOffset(ctx)
				if err != nil {
					return fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.sourceDescriptions[i], err)
				}
				m.latest[i] = latest
				end := latest
				if ac, ok := src.(AdmissionControlSource); ok && m.cfg.trigger.kind != triggerOnce {
					if end, err = ac.LatestOffsetFrom(ctx, m.committed[i]); err != nil {
						return fmt.Errorf("arrowstream: source %s: latest offset: %w", m.cfg.sourceDescriptions[i], err)
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
			return nil
		})
		if err != nil {
			return triggerResult{}, err
		}
		another := m.cfg.noDataBatches && m.ranBatch && m.cfg.trigger.kind != triggerOnce &&
			m.cfg.exec.ShouldRunAnotherBatch(m.tracker.global)
		if !isNew && !another {
			copy(m.available, m.committed)
			return triggerResult{progress: m.idleProgress(start, wallStart, durations)}, nil
		}
		m.batchTimestampMs = m.cfg.clock.Now().UnixMilli()
		m.lateWatermarkMs = m.batchWatermarkMs
		if m.batchID == 0 {
			m.lateWatermarkMs = 0
		}
		m.batchWatermarkMs = m.tracker.global
		err = timed("walCommit", func() error {
			seq := checkpoint.OffsetSeq{BatchWatermarkMs: m.batchWatermarkMs, BatchTimestampMs: m.batchTimestampMs, Conf: m.conf}
			for _, o := range m.available {
				seq.Offsets = append(seq.Offsets, []byte(o))
			}
			ok, err := m.offsets.Add(m.batchID, seq)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("arrowstream: offsets for batch %d already exist in %s: is another query using this checkpoint concurrently?", m.batchID, m.offsets.Log().Dir())
			}
			// Sources may forget data of earlier batches.
			for i, src := range m.cfg.sources {
				if m.committed[i] != nil {
					if err := src.Commit(ctx, m.committed[i]); err != nil {
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
			return triggerResult{}, err
		}
		m.constructed = true
	}
	return m.runBatch(ctx, start, wallStart, durations, timed)
}

// runBatch executes the constructed batch, commits it to the sink, the
// state and the commit log.
func (m *microBatch) runBatch(ctx context.Context, start, wallStart time.Time, durations map[string]int64, timed func(string, func() error) error) (triggerResult, error) {
	ep := EpochInfo{
		ID:               m.batchID,
		BatchTimestampMs: m.batchTimestampMs,
		WatermarkMs:      m.batchWatermarkMs,
		LateWatermarkMs:  m.lateWatermarkMs,
		HasWatermark:     len(m.cfg.exec.WatermarkNodes()) > 0,
		CheckpointDir:    m.cfg.checkpointDir,
		NumPartitions:    m.numPartitions(),
		Conf:             m.conf,
	}
	inputRows := make([]atomic.Int64, len(m.cfg.sources))
	inputs := make([]vector.Operator, len(m.cfg.sources))
	closeInputs := func() {
		for _, in := range inputs {
			if in != nil {
				in.Close()
			}
		}
	}
	err := timed("getBatch", func() error {
		for i, src := range m.cfg.sources {
			var op vector.Operator
			if m.available[i] != nil && !m.available[i].Equal(m.committed[i]) {
				var err error
				op, err = src.Read(ctx, m.committed[i], m.available[i])
				if err != nil {
					return fmt.Errorf("arrowstream: source %s: read (%s, %s]: %w", m.cfg.sourceDescriptions[i], m.committed[i], m.available[i], err)
				}
			} else {
				op = emptyInput(src.Schema())
			}
			inputs[i] = &countingOperator{Operator: op, rows: &inputRows[i]}
		}
		return nil
	})
	if err != nil {
		closeInputs()
		return triggerResult{}, err
	}
	var out vector.Operator
	err = timed("queryPlanning", func() error {
		var err error
		out, err = m.cfg.exec.Execute(ctx, ep, inputs)
		return err
	})
	if err != nil {
		// Execute owns its inputs even on error.
		m.cfg.exec.AbortState(ep)
		return triggerResult{}, err
	}
	if m.cfg.faults != nil {
		if out, err = m.injectFault(ctx, out, inputRows); err != nil {
			m.cfg.exec.AbortState(ep)
			return triggerResult{}, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
		}
	}
	var outputRows atomic.Int64
	err = timed("addBatch", func() error {
		return m.cfg.sink.AddBatch(ctx, m.batchID, &countingOperator{Operator: out, rows: &outputRows})
	})
	if err != nil {
		m.cfg.exec.AbortState(ep)
		return triggerResult{}, fmt.Errorf("arrowstream: epoch %d: %w", m.batchID, err)
	}
	err = timed("commitOffsets", func() error {
		if err := m.cfg.exec.CommitState(ctx, ep); err != nil {
			return err
		}
		m.tracker.observe(m.cfg.exec.WatermarkNodes(), m.cfg.exec.EventTimeStats())
		ok, err := m.commits.Add(m.batchID, checkpoint.CommitMetadata{NextBatchWatermarkMs: m.tracker.global})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("arrowstream: commit for batch %d already exists in %s: is another query using this checkpoint concurrently?", m.batchID, m.commits.Log().Dir())
		}
		return nil
	})
	if err != nil {
		return triggerResult{}, err
	}
	prog := m.batchProgress(start, wallStart, durations, ep, inputRows, outputRows.Load())
	copy(m.committed, m.available)
	m.batchID++
	m.constructed = false
	m.ranBatch = true
	return triggerResult{ran: true, progress: prog}, nil
}

// errStopped marks the end of a query by Stop (not a failure).
var errStopped = errors.New("query stopped")
