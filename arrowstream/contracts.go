package arrowstream

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Offset is a source's position, as the single-line JSON text the source
// chooses (MemoryStream: a bare integer; files: {"logOffset":n}). The engine
// stores offsets in the offset log and compares them bytewise; only the
// source interprets them. A nil Offset means "no data yet".
type Offset []byte

// Equal reports whether two offsets are the same position.
func (o Offset) Equal(p Offset) bool { return bytes.Equal(o, p) }

func (o Offset) String() string {
	if o == nil {
		return "-"
	}
	return string(o)
}

// Source is a replayable stream of record batches.
//
// LatestOffset returns the newest available end offset (nil when the source
// has no data yet). Read returns the rows in (start, end] as an operator,
// start nil meaning from the beginning; it must return the same rows every
// time it is called with the same range, also after a restart, for as long
// as the range has not been committed. Commit tells the source that data up
// to end has been processed and may be forgotten. The engine calls a Source
// from one goroutine at a time; Close releases it.
type Source interface {
	Schema() *arrow.Schema
	LatestOffset(ctx context.Context) (Offset, error)
	Read(ctx context.Context, start, end Offset) (vector.Operator, error)
	Commit(ctx context.Context, end Offset) error
	Close() error
}

// Sink receives the result of every epoch.
//
// AddBatch consumes data (the epoch's result rows; the sink closes it) and
// makes them visible atomically. It must be idempotent: a second AddBatch of
// an epoch that was already committed changes nothing, which is what makes
// re-running the last epoch after a crash safe.
type Sink interface {
	AddBatch(ctx context.Context, epoch int64, data vector.Operator) error
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
