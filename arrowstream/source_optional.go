package arrowstream

import (
	"context"

	"github.com/arrowstream/arrowstream/vector"
)

// Optional source capabilities, checked with a type assertion.

// InitialOffsetSource has a defined start position: a new query starts
// from it rather than from "nothing", so that its first epoch reads only
// data after it (the rate source starts at second 0).
type InitialOffsetSource interface {
	InitialOffset() Offset
}

// AdmissionControlSource bounds how much one epoch reads (rows per batch,
// files per trigger): given the epoch's start offset it returns the end.
// The engine prefers it over LatestOffset; LatestOffset still reports the
// newest data for progress.
type AdmissionControlSource interface {
	LatestOffsetFrom(ctx context.Context, start Offset) (Offset, error)
}

// CheckpointedSource keeps private metadata in the query's checkpoint
// (<checkpoint>/sources/<i>/): the engine calls SetCheckpointDir before the
// first LatestOffset.
type CheckpointedSource interface {
	SetCheckpointDir(dir string) error
}

// DescribedSource names itself in progress reports.
type DescribedSource interface {
	Description() string
}

// NotifyingSource tells a continuous query when new data arrives, so that
// it processes it at once instead of polling (an idle micro-batch query
// likewise starts its next epoch at once instead of after the polling
// delay). DataAvailable returns a
// channel that is closed when data is added after the call; callers ask
// again after it fires. Sources without it are polled (every
// continuousPollInterval).
type NotifyingSource interface {
	DataAvailable() <-chan struct{}
}

// MetricsSource reports source-specific metrics (Spark's
// SourceProgress.metrics: the file source's malformed-row counts, for
// instance). The engine calls Metrics after each batch, from the query's
// goroutine; the map is the caller's.
type MetricsSource interface {
	Metrics() map[string]string
}

// BatchSource can also be read as a batch (a plain SELECT over a table
// declared with CREATE TABLE ... USING): ReadBatch returns every row
// currently available, as an operator the caller owns and closes. It has
// no effect on streaming offsets.
type BatchSource interface {
	ReadBatch(ctx context.Context) (vector.Operator, error)
}
