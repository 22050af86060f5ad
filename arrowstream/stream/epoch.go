package stream

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
	// previous epoch (docs/semantics.md §3.3).
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
}
