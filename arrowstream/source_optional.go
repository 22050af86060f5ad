package arrowstream

import "context"

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
