package arrowstream

import (
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// The contracts live in package stream, so that connectors, sinks and the
// server implement them without importing the engine; they are re-exported
// here under their historical names.

type (
	// Offset is a source's position (see stream.Offset).
	Offset = stream.Offset
	// Source is a replayable stream of record batches (see stream.Source).
	Source = stream.Source
	// InitialOffsetSource has a defined start position.
	InitialOffsetSource = stream.InitialOffsetSource
	// AdmissionControlSource bounds how much one epoch reads.
	AdmissionControlSource = stream.AdmissionControlSource
	// CheckpointedSource keeps private metadata in the query's checkpoint.
	CheckpointedSource = stream.CheckpointedSource
	// DescribedSource names itself in progress reports.
	DescribedSource = stream.DescribedSource
	// NotifyingSource tells the engine when new data arrives.
	NotifyingSource = stream.NotifyingSource
	// MetricsSource reports source-specific metrics.
	MetricsSource = stream.MetricsSource
	// BatchSource can also be read as a batch.
	BatchSource = stream.BatchSource

	// Sink receives the result of every epoch (see stream.Sink).
	Sink = stream.Sink
	// ClosingSink holds resources for the life of its query.
	ClosingSink = stream.ClosingSink
	// RecoverableSink says whether a query may resume from a checkpoint.
	RecoverableSink = stream.RecoverableSink
	// ArrivalSink can show rows before their epoch commits.
	ArrivalSink = stream.ArrivalSink
	// SinkInfo describes the query a sink is created for.
	SinkInfo = stream.SinkInfo
	// OutputMode says what a query writes to its sink each epoch.
	OutputMode = stream.OutputMode

	// SourceFormat creates a streaming source of a format from options.
	SourceFormat = stream.SourceFormat
	// SinkFormat creates a sink for a query.
	SinkFormat = stream.SinkFormat

	// EpochInfo is what an epoch's execution knows about the epoch.
	EpochInfo = stream.EpochInfo

	// StreamingQueryProgress reports one trigger of a streaming query.
	StreamingQueryProgress = stream.StreamingQueryProgress
	// StateOperatorProgress reports one stateful operator.
	StateOperatorProgress = stream.StateOperatorProgress
	// SourceProgress reports one source.
	SourceProgress = stream.SourceProgress
	// SinkProgress reports the sink.
	SinkProgress = stream.SinkProgress
)

// The output modes.
const (
	// Append writes only rows that will never change again.
	Append = stream.Append
	// Update writes the rows that changed in this epoch.
	Update = stream.Update
	// Complete writes the whole result every epoch.
	Complete = stream.Complete
)

// ParseOutputMode parses "append", "update" or "complete" (any case).
func ParseOutputMode(s string) (OutputMode, error) { return stream.ParseOutputMode(s) }

// Keys of the settings frozen in the offset log: a restarted query takes
// them from its checkpoint, not from the new session.
const (
	ConfShufflePartitions = stream.ConfShufflePartitions
	ConfWatermarkPolicy   = stream.ConfWatermarkPolicy
	ConfStateProvider     = stream.ConfStateProvider
	ConfAggStateFormat    = stream.ConfAggStateFormat
	ConfStatePartitioning = stream.ConfStatePartitioning
)

// ConfClusterStatefulStableMembership is accepted and has no effect any
// more (see stream.ConfClusterStatefulStableMembership).
const ConfClusterStatefulStableMembership = stream.ConfClusterStatefulStableMembership

// Settings of the state store (session conf or query option; recorded in
// the offset log with the other settings that shape state); see the
// constants of the same names in package stream.
const (
	ConfStateStoreProvider         = stream.ConfStateStoreProvider
	ConfPebbleBlockCacheBytes      = stream.ConfPebbleBlockCacheBytes
	ConfPebbleMemtableBytes        = stream.ConfPebbleMemtableBytes
	ConfPebbleLocalDir             = stream.ConfPebbleLocalDir
	ConfPebbleChangelog            = stream.ConfPebbleChangelog
	ConfPebbleMinDeltasForSnapshot = stream.ConfPebbleMinDeltasForSnapshot
	ConfPebbleLiveStateBytes       = stream.ConfPebbleLiveStateBytes
)
