package stream

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Sink capabilities (ClosingSink, RecoverableSink, ArrivalSink) are small
// optional interfaces the engine checks with a type assertion; they are all
// in this file.

// Sink receives the result of every epoch.
//
// AddBatch consumes data (the epoch's result rows; the sink closes it) and
// makes them visible atomically. It must be idempotent: a second AddBatch of
// an epoch that was already committed changes nothing, which is what makes
// re-running the last epoch after a crash safe.
type Sink interface {
	AddBatch(ctx context.Context, epoch int64, data vector.Operator) error
}

// SinkInfo describes the query a sink is created for.
type SinkInfo struct {
	// QueryName names the query (and the memory sink's table).
	QueryName string
	// Schema is the schema of the rows AddBatch receives.
	Schema *arrow.Schema
	// Mode is the query's output mode.
	Mode OutputMode
	// KeyColumns are the columns that identify a result row in Update mode
	// (the grouping keys of the query's aggregation), when known.
	KeyColumns []string
	// CheckpointDir is the query's checkpoint directory, for sinks that
	// keep their own durable metadata there.
	CheckpointDir string
	// Options are the writer's options (format specific).
	Options map[string]string
}

// WriterOptionKeys are the writer settings the engine itself reads
// (TBLPROPERTIES of CREATE STREAMING TABLE, or DataStreamWriter options).
// A sink that rejects unknown options accepts these, and offers them in
// its "did you mean" hints.
// The continuous.* keys are those engine.ContinuousOptions reads; the
// restart.* keys (RestartOptionKeys) those engine.RestartOptions reads.
//
// They include the state store settings (ConfStateStoreProvider and
// StateTuningKeys, read by the writer as query settings) and the SQL
// settings a streaming table may override for its own query
// (spark.sql.ansi.enabled, spark.sql.session.timeZone: plan.ConfANSI and
// plan.ConfTimeZone; a test in the arrowstream package ties the two).
func WriterOptionKeys() []string {
	keys := []string{"outputMode", "trigger", "checkpointLocation",
		"continuous.visibility", "continuous.maxPendingBytes", "continuous.pollInterval",
		ConfStateStoreProvider, "spark.sql.ansi.enabled", "spark.sql.session.timeZone"}
	keys = append(keys, RestartOptionKeys()...)
	return append(keys, StateTuningKeys()...)
}

// OutputMode says what a streaming query writes to its sink each epoch.
type OutputMode int

const (
	// Append writes only rows that will never change again.
	Append OutputMode = iota
	// Update writes the rows that changed in this epoch.
	Update
	// Complete writes the whole result every epoch.
	Complete
)

func (m OutputMode) String() string {
	switch m {
	case Append:
		return "append"
	case Update:
		return "update"
	case Complete:
		return "complete"
	}
	return fmt.Sprintf("OutputMode(%d)", int(m))
}

// ParseOutputMode parses "append", "update" or "complete" (any case).
func ParseOutputMode(s string) (OutputMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "append":
		return Append, nil
	case "update":
		return Update, nil
	case "complete":
		return Complete, nil
	}
	return 0, fmt.Errorf("arrowstream: unknown output mode %q (want append, update or complete)", s)
}

// ClosingSink is a sink that holds resources for the life of its query (a
// Kafka producer, open connections). The engine calls CloseSink exactly
// once, when the query ends (stopped, failed or finished), or when Start
// fails after the sink was created.
//
// Only sinks the engine created from a format (DataStreamWriter.Format)
// are closed; a sink passed to DataStreamWriter.Sink belongs to its
// caller. The method is not io.Closer's Close on purpose: memory sink
// tables have a Close that drops their data, and they outlive the query
// in the session's catalog.
type ClosingSink interface {
	Sink
	CloseSink() error
}

// RecoverableSink is a sink that says whether a query may resume from an
// existing checkpoint (the memory sink refuses Append and Update unless it
// persists its data).
type RecoverableSink interface {
	CanRecover(checkpointDir string, mode OutputMode) error
}

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

// EpochIdempotentSink is a sink that keeps, per epoch id, the first
// output it committed and ignores a later AddBatch of that epoch (the
// memory sink, the file sink). For such a sink a lost commit record only
// re-runs the epoch, so the engine writes the commit record of epoch N
// together with the offsets of epoch N+1: one durable write per epoch
// (checkpoint.OpenEpochLogs has the argument).
type EpochIdempotentSink interface {
	Sink
	EpochIdempotent() bool
}
