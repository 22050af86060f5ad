package arrowstream

import (
	"context"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// EpochInfo is what an epoch's execution knows about the epoch.
type EpochInfo struct {
	// ID is the epoch (batch) id; state stores read version ID and commit
	// version ID+1.
	ID int64
	// BatchTimestampMs is the epoch's processing time: current_timestamp()
	// evaluates to it, and a replayed epoch reuses the recorded value.
	BatchTimestampMs int64
	// WatermarkMs is the eviction watermark (the global watermark recorded
	// in the epoch's offsets).
	WatermarkMs int64
	// LateWatermarkMs is the late-event watermark: the watermark of the
	// previous epoch (SEMANTICS.md §3.3).
	LateWatermarkMs int64
	// HasWatermark reports whether the query defines a watermark.
	HasWatermark bool
	// CheckpointDir is the query's checkpoint (state lives under state/).
	CheckpointDir string
	// NumPartitions is the number of state partitions (frozen in the
	// checkpoint).
	NumPartitions int
	// Conf is the query's effective settings (session conf, state store
	// options, and what the checkpoint recorded); read only.
	Conf map[string]string

	// stateStores provides the stateful operators' state partitions (set
	// by streamExec; nil: each operator uses the memory provider).
	stateStores checkpoint.StateStoreProvider
}

// executor runs the body of a streaming query for one epoch: it is the
// incremental plan with its stateful operators. The micro-batch loop
// supplies each source's data for the epoch and sends the result to the
// sink.
type executor interface {
	// Execute returns the epoch's result. inputs has one operator per
	// source, in the order of the query's sources (an empty operator for a
	// source without new data); Execute owns them.
	Execute(ctx context.Context, ep EpochInfo, inputs []vector.Operator) (vector.Operator, error)
	// CommitState durably commits the state of every stateful operator for
	// ep (after the sink committed the epoch). A stateless plan does
	// nothing.
	CommitState(ctx context.Context, ep EpochInfo) error
	// AbortState discards the epoch's state updates.
	AbortState(ep EpochInfo)
	// WatermarkNodes lists the plan's watermark nodes (stable names).
	WatermarkNodes() []string
	// EventTimeStats returns what each watermark node observed in the last
	// executed epoch.
	EventTimeStats() []EventTimeStats
	// ShouldRunAnotherBatch reports whether a no-data epoch would produce
	// output or evict state given the new global watermark (§3.5).
	ShouldRunAnotherBatch(newWatermarkMs int64) bool
	// StateProgress reports the stateful operators after the last epoch.
	StateProgress() []StateOperatorProgress
	// Close releases the executor's resources (state caches).
	Close() error
}
