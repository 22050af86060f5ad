package stream

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

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

// LongOffset parses an offset that is a bare integer (the memory and rate
// sources' offsets); a nil offset is -1 ("before the first").
func LongOffset(o Offset) (int64, error) {
	if o == nil {
		return -1, nil
	}
	n, err := strconv.ParseInt(string(o), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("offset %q is not an integer: %w", o, err)
	}
	return n, nil
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

// Optional source capabilities, checked with a type assertion.

// InitialOffsetSource has a defined start position: a new query starts
// from it rather than from "nothing", so that its first epoch reads only
// data after it (the rate source starts at second 0).
type InitialOffsetSource interface {
	InitialOffset() Offset
}

// ResumableSource numbers its data so that a restarted query sees what is
// added after the restart even when the source itself did not survive
// it: the memory source comes back empty with a new process and would
// otherwise number new data from 0 again, below the offsets the query's
// checkpoint has reached, so the query would skip it. On start the engine
// calls Resume with the end offset of the query's last recorded batch
// (nothing for a new query); the source numbers data added from then on
// after it, and offsets up to it that it no longer holds read as empty
// (their data was lost with the process that held it).
type ResumableSource interface {
	Resume(end Offset) error
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

// IdlePollSource lets an idle micro-batch query sleep longer than the
// polling delay (10 ms): IdlePollDelay is how long the source will have
// nothing new to report (0: ask again after the usual delay), for
// instance because it reports its last listing of a remote system until
// its next one is due. An idle query sleeps the shortest delay of its
// sources (a source without this method counts as the polling delay),
// at least the polling delay and at most a second. Every idle poll costs
// a goroutine wake-up, a planning and an idle progress record, which is
// most of an idle cluster instance's CPU (docs/cluster.md).
type IdlePollSource interface {
	IdlePollDelay() time.Duration
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

// DurablePlanSource is a source whose Read has effects outside the
// checkpoint that a re-planned epoch must see again (it hands out data
// that a second LatestOffset would not offer the same way). When
// DurablePlan reports true, the micro-batch loop writes an epoch's offsets
// record with its own fdatasync before reading, as for a stateless query;
// otherwise a stateful epoch's offsets record waits for its state record
// (one fdatasync for both), and a crash before that write plans the
// epoch again. No built-in source needs it: rate, memory, files (through
// its own log) and Kafka read a planned range the same way each time.
type DurablePlanSource interface {
	DurablePlan() bool
}
