package engine

import (
	"context"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Executor runs the body of a streaming query for one epoch: it is the
// incremental plan with its stateful operators. The micro-batch loop
// supplies each source's data for the epoch and sends the result to the
// sink.
type Executor interface {
	// Execute returns the epoch's result. inputs has one operator per
	// source, in the order of the query's sources (an empty operator for a
	// source without new data); Execute owns them.
	Execute(ctx context.Context, ep stream.EpochInfo, inputs []vector.Operator) (vector.Operator, error)
	// HasState reports whether the plan has stateful operators: their
	// state is committed before the sink sees the epoch's output, so the
	// loop drains the output first.
	HasState() bool
	// CommitState durably commits the state of every stateful operator for
	// ep, before the sink sees the epoch (a state read or write that failed
	// fails the commit, and the epoch's output is dropped). A stateless
	// plan does nothing.
	CommitState(ctx context.Context, ep stream.EpochInfo) error
	// AbortState discards the epoch's state updates.
	AbortState(ep stream.EpochInfo)
	// WatermarkNodes lists the plan's watermark nodes (stable names); the
	// caller must not change the slice.
	WatermarkNodes() []string
	// EventTimeStats returns what each watermark node observed in the last
	// executed epoch, in a slice the caller may change but must not keep
	// past the next call.
	EventTimeStats() []stateful.EventTimeStats
	// ShouldRunAnotherBatch reports whether a no-data epoch would produce
	// output or evict state given the new global watermark (§3.5).
	ShouldRunAnotherBatch(newWatermarkMs int64) bool
	// StateProgress reports the stateful operators after the last epoch.
	StateProgress() []stream.StateOperatorProgress
	// Close releases the executor's resources (state caches).
	Close() error
}

// stateLogMarker is implemented by executors whose state is group-committed
// to a state log (checkpoint.StateLog): the loop records the log's
// version in each commit record and hands the last one back on restart,
// so that a state log that lost committed records is refused.
type stateLogMarker interface {
	// StateLogEnd is where the state log ends (nil: no record).
	StateLogEnd() *checkpoint.StateLogMark
	// ExpectStateLog sets the end the state log must reach when it is
	// opened.
	ExpectStateLog(m *checkpoint.StateLogMark)
	// UseEpochLog gives the run's v2 epoch log (nil: v1), in which a
	// new checkpoint's state records are written with the epoch's
	// offsets record (checkpoint.OpenQueryStateLog). A different log
	// than the previous run's (a restart) reopens the state from the
	// checkpoint.
	UseEpochLog(l *checkpoint.SegmentLog) error
}
