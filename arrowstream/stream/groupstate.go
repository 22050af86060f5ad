package stream

import (
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
)

// GroupStateTimeout is the timeout kind of a FlatMapGroupsWithState
// (docs/semantics.md §8). Its values are those of plan.GroupStateTimeout,
// which the arrowstream package exports as its GroupStateTimeout.
type GroupStateTimeout int

// The group state timeouts.
const (
	// NoTimeout: keys never time out.
	NoTimeout GroupStateTimeout = iota
	// ProcessingTimeTimeout: a key times out when the batch timestamp
	// passes the timeout set with SetTimeoutDuration.
	ProcessingTimeTimeout
	// EventTimeTimeout: a key times out when the watermark passes the
	// timeout set with SetTimeoutTimestamp.
	EventTimeTimeout
)

// GroupFunc is the user function of FlatMapGroupsWithState and
// MapGroupsWithState. It is called once per key that has rows in the
// epoch, with key (a one-row array of the key expression's type), the
// key's rows of this epoch (the input's columns), and the key's state;
// then once per timed-out key with an empty rows record and
// state.HasTimedOut(). key and rows are borrowed for the call. It returns
// rows of the declared output schema (owned by the engine from then on),
// or nil for none; mapGroupsWithState functions return exactly one row.
// A returned error fails the epoch, whose state changes are discarded.
//
// Concurrency: the state partitions of an epoch are processed in parallel,
// so fn may be called concurrently for different keys (of different
// partitions); it is never called concurrently for the same key. A
// function that shares data across keys must synchronise it.
type GroupFunc func(key arrow.Array, rows arrow.Record, state *GroupState) (arrow.Record, error)

// NoTimeoutSet marks a state entry or handle without timeout.
const NoTimeoutSet = int64(-1)

// ErrGroupState is wrapped by the errors of GroupState's methods.
var ErrGroupState = errors.New("arrowstream: group state")

// GroupState is the state handle of one key in one call of a GroupFunc.
// The state is the user's bytes (encode structured state yourself, e.g.
// with encoding/binary or an Arrow IPC row). The timeout is not carried
// over between calls: a call that does not set it again clears it.
type GroupState struct {
	value   []byte
	exists  bool
	updated bool
	removed bool

	timeoutKind  GroupStateTimeout
	timeoutMs    int64 // NoTimeoutSet when none
	timedOut     bool
	batchTsMs    int64
	watermarkMs  int64
	hasWatermark bool
}

// Exists reports whether the key has a state.
func (s *GroupState) Exists() bool { return s.exists }

// Get returns the state (nil when it does not exist). The bytes are
// borrowed: copy them to keep them past the call.
func (s *GroupState) Get() []byte {
	if !s.exists {
		return nil
	}
	return s.value
}

// Update sets the state; a nil value is an error (use Remove).
func (s *GroupState) Update(value []byte) error {
	if value == nil {
		return fmt.Errorf("%w: update with a nil state; use Remove", ErrGroupState)
	}
	s.value = append([]byte{}, value...)
	s.exists, s.updated, s.removed = true, true, false
	return nil
}

// Remove removes the state (Update defines it again).
func (s *GroupState) Remove() {
	s.value, s.exists, s.updated, s.removed = nil, false, false, true
}

// HasTimedOut reports whether this call is for a timed-out key (no rows).
func (s *GroupState) HasTimedOut() bool { return s.timedOut }

// SetTimeoutDuration sets a processing-time timeout d after the batch
// timestamp (ProcessingTimeTimeout only; d > 0).
func (s *GroupState) SetTimeoutDuration(d time.Duration) error {
	if s.timeoutKind != ProcessingTimeTimeout {
		return fmt.Errorf("%w: cannot set a timeout duration without ProcessingTimeTimeout", ErrGroupState)
	}
	if d <= 0 {
		return fmt.Errorf("%w: timeout duration %v must be positive", ErrGroupState, d)
	}
	s.timeoutMs = s.batchTsMs + d.Milliseconds()
	return nil
}

// SetTimeoutTimestamp sets an event-time timeout at tsMs, plus the
// optional extra durations (EventTimeTimeout only; the timestamp must be
// positive and not below the current watermark).
func (s *GroupState) SetTimeoutTimestamp(tsMs int64, extra ...time.Duration) error {
	if s.timeoutKind != EventTimeTimeout {
		return fmt.Errorf("%w: cannot set a timeout timestamp without EventTimeTimeout", ErrGroupState)
	}
	for _, d := range extra {
		tsMs += d.Milliseconds()
	}
	if tsMs <= 0 {
		return fmt.Errorf("%w: timeout timestamp %d must be positive", ErrGroupState, tsMs)
	}
	if s.hasWatermark && tsMs < s.watermarkMs {
		return fmt.Errorf("%w: timeout timestamp %d is below the current watermark %d", ErrGroupState, tsMs, s.watermarkMs)
	}
	s.timeoutMs = tsMs
	return nil
}

// GetCurrentWatermarkMs returns the watermark used for eviction and
// timeouts in this epoch; an error when the operator's input has no
// event-time column (the query has no watermark, a projection dropped the
// column, or another flatMapGroupsWithState made the rows), as Spark's
// watermarkPresent.
func (s *GroupState) GetCurrentWatermarkMs() (int64, error) {
	if !s.hasWatermark {
		return 0, fmt.Errorf("%w: cannot get the event-time watermark: no watermarked column reaches this operator's input (use withWatermark before it)", ErrGroupState)
	}
	return s.watermarkMs, nil
}

// GetCurrentProcessingTimeMs returns the epoch's batch timestamp.
func (s *GroupState) GetCurrentProcessingTimeMs() int64 { return s.batchTsMs }

// GroupStateInit is what the engine knows about a key before calling its
// GroupFunc.
type GroupStateInit struct {
	// Value and Exists are the key's stored state (Value is copied).
	Value  []byte
	Exists bool
	// Timeout is the query's timeout kind; TimedOut marks the call for a
	// timed-out key.
	Timeout  GroupStateTimeout
	TimedOut bool
	// BatchTimestampMs, WatermarkMs and HasWatermark describe the epoch.
	BatchTimestampMs int64
	WatermarkMs      int64
	HasWatermark     bool
}

// NewGroupState returns the handle for one call of a GroupFunc (the
// engine's side; user code receives handles, it does not make them).
func NewGroupState(init GroupStateInit) *GroupState {
	s := &GroupState{exists: init.Exists, timeoutKind: init.Timeout, timeoutMs: NoTimeoutSet, timedOut: init.TimedOut,
		batchTsMs: init.BatchTimestampMs, watermarkMs: init.WatermarkMs, hasWatermark: init.HasWatermark}
	if init.Exists {
		s.value = append([]byte(nil), init.Value...)
	}
	return s
}

// GroupStateOutcome is what a GroupFunc call left in its handle, for the
// engine to write back.
type GroupStateOutcome struct {
	Value            []byte
	Exists           bool
	Updated, Removed bool
	// TimeoutMs is the timeout set during the call, NoTimeoutSet if none.
	TimeoutMs int64
}

// Outcome returns the state after the call (the engine's side).
func (s *GroupState) Outcome() GroupStateOutcome {
	return GroupStateOutcome{Value: s.value, Exists: s.exists, Updated: s.updated, Removed: s.removed, TimeoutMs: s.timeoutMs}
}
