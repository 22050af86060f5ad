package streamtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// Action is one step of a stream test. Actions are values: build them
// with the constructors of this package and run them with Stream.Do,
// Stream.Run or Run.
type Action interface {
	// String describes the action in the dump.
	String() string
	run(s *Stream) error
}

// action is an Action made of a description and a function.
type action struct {
	desc string
	fn   func(s *Stream) error
}

func (a action) String() string                              { return a.desc }
func (a action) run(s *Stream) error                         { return a.fn(s) }
func newAction(desc string, fn func(s *Stream) error) Action { return action{desc: desc, fn: fn} }

// SourceRows is one source's rows of a MultiAddData.
type SourceRows struct {
	Source *Source
	Rows   []Row
}

// AddData adds rows to src as one new offset (no rows still add one).
func AddData(src *Source, rows ...Row) Action {
	return newAction(fmt.Sprintf("AddData(%s, %s)", sourceName(src), describeRows(rows)), func(s *Stream) error {
		return s.addRows([]SourceRows{{Source: src, Rows: rows}})
	})
}

// MultiAddData adds rows to several sources so that they land in the same
// epoch.
func MultiAddData(adds ...SourceRows) Action {
	parts := make([]string, len(adds))
	for i, a := range adds {
		parts[i] = fmt.Sprintf("%s: %s", sourceName(a.Source), describeRows(a.Rows))
	}
	return newAction("MultiAddData("+strings.Join(parts, "; ")+")", func(s *Stream) error {
		return s.addRows(adds)
	})
}

func sourceName(src *Source) string {
	if src == nil {
		return "<nil source>"
	}
	return src.name
}

func describeRows(rows []Row) string {
	if len(rows) <= 6 {
		parts := make([]string, len(rows))
		for i, r := range rows {
			parts[i] = FormatRow(r)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%d rows, first %s", len(rows), FormatRow(rows[0]))
}

// StartStream starts (or restarts) the query on the fixture's checkpoint
// and sink, with trigger and, when manualClock, the fixture's manual
// clock. With a manual clock and a ProcessingTime interval it returns once
// the query has run the trigger due at the current clock time and waits
// for the next one, so that data added afterwards goes to a later trigger.
func StartStream(trigger arrowstream.Trigger, manualClock bool) Action {
	desc := fmt.Sprintf("StartStream(%s", trigger)
	if manualClock {
		desc += ", manual clock"
	}
	return newAction(desc+")", func(s *Stream) error { return s.start(trigger, manualClock) })
}

func (s *Stream) start(trigger arrowstream.Trigger, manual bool) error {
	q, err := s.startQuery(trigger, manual)
	if err != nil {
		return &StartRefusedError{Err: err}
	}
	s.query, s.trigger, s.manualRun, s.started = q, trigger, manual, true
	s.stateMark, s.carried = nil, nil
	if s.idleOnManualClock() {
		return s.waitFor("the query to run its first trigger and wait on the manual clock", func() bool {
			return s.manual.Waiting() || !q.IsActive()
		})
	}
	return nil
}

// StartRefusedError is StartStream's error when the query did not start:
// the engine refused it (an analysis error) or could not set it up.
type StartRefusedError struct{ Err error }

func (e *StartRefusedError) Error() string { return "start: " + e.Err.Error() }

func (e *StartRefusedError) Unwrap() error { return e.Err }

// StopStream stops the query cleanly; the checkpoint and the sink are
// kept.
func StopStream() Action {
	return newAction("StopStream", func(s *Stream) error {
		if s.query == nil {
			return errors.New("no query was started")
		}
		return s.stopQuery()
	})
}

// Restart stops the query (if it runs) and starts it again with the
// settings of the last start.
func Restart() Action {
	return newAction("Restart", func(s *Stream) error {
		if !s.started {
			return errors.New("no query was started")
		}
		if err := s.stopQuery(); err != nil {
			return err
		}
		return s.start(s.trigger, s.manualRun)
	})
}

// RestartKeepingMetrics is Restart for a test harness that restarts a
// query behind the scenario's back (restart equivalence): the state
// metrics reported since the last AssertStateRows carry over into the new
// run, so that the assertions see the same sums as without the restart.
func RestartKeepingMetrics() Action {
	return newAction("Restart", func(s *Stream) error {
		if !s.started {
			return errors.New("no query was started")
		}
		var keep []*arrowstream.StreamingQueryProgress
		if s.query != nil {
			reports := s.query.RecentProgress()
			start := 0
			for i, p := range reports {
				if p == s.stateMark {
					start = i + 1
				}
			}
			keep = append(append(keep, s.carried...), reports[start:]...)
		}
		if err := s.stopQuery(); err != nil {
			return err
		}
		if err := s.start(s.trigger, s.manualRun); err != nil {
			return err
		}
		s.carried = keep
		return nil
	})
}

// ProcessAllAvailable waits until the query has processed all available
// input, including the no-data epochs it causes (with a manual clock:
// until the query waits for its next trigger).
func ProcessAllAvailable() Action {
	return newAction("ProcessAllAvailable", func(s *Stream) error {
		return s.settle()
	})
}

// AwaitTermination waits for a Once or AvailableNow query to end; an
// error that ended it fails the action.
func AwaitTermination() Action {
	return newAction("AwaitTermination", func(s *Stream) error {
		if s.query == nil {
			return errors.New("no query was started")
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.StepTimeout)
		defer cancel()
		if err := s.query.AwaitTermination(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("the query did not terminate within %s", s.opts.StepTimeout)
			}
			return fmt.Errorf("the query failed: %w", err)
		}
		return nil
	})
}

// AdvanceClock advances the manual clock by d, lets the triggers that
// become due run, and waits until the query waits for its next trigger.
func AdvanceClock(d time.Duration) Action {
	return newAction(fmt.Sprintf("AdvanceClock(%s)", d), func(s *Stream) error {
		if s.running() && !s.manualRun {
			return errors.New("the query does not run on the manual clock (start it with manualClock)")
		}
		s.manual.Advance(d)
		if !s.running() || !s.idleOnManualClock() {
			return nil
		}
		q := s.query
		if err := s.waitFor("the query to run the due trigger and wait for the next one", func() bool {
			return s.manual.Waiting() || !q.IsActive()
		}); err != nil {
			return err
		}
		if err := q.Exception(); err != nil {
			return fmt.Errorf("the query failed: %w", err)
		}
		return nil
	})
}

// AdvanceClockDirectly advances the manual clock by d without waiting for
// any trigger (for use while the query is stopped).
func AdvanceClockDirectly(d time.Duration) Action {
	return newAction(fmt.Sprintf("AdvanceClockDirectly(%s)", d), func(s *Stream) error {
		s.manual.Advance(d)
		return nil
	})
}

// Phase is when ExpectFailure expects the query to fail.
type Phase int

const (
	// AnalysisPhase: starting the query fails (the action starts it).
	AnalysisPhase Phase = iota
	// RuntimePhase: the running query terminates with an error.
	RuntimePhase
)

func (p Phase) String() string {
	if p == AnalysisPhase {
		return "analysis"
	}
	return "runtime"
}

// ExpectFailure expects the query to fail in phase with an error whose
// message contains substring (case-insensitively; "" accepts any error).
// In AnalysisPhase the action itself starts the query (with the default
// trigger) and passes when the start is refused; in RuntimePhase it waits
// for the running query to terminate with an error.
func ExpectFailure(phase Phase, substring string) Action {
	desc := fmt.Sprintf("ExpectFailure(%s", phase)
	if substring != "" {
		desc += fmt.Sprintf(", %q", substring)
	}
	return newAction(desc+")", func(s *Stream) error {
		var err error
		switch phase {
		case AnalysisPhase:
			var q *arrowstream.StreamingQuery
			q, err = s.startQuery(arrowstream.ProcessingTime(0), false)
			if err == nil {
				s.query, s.trigger, s.manualRun, s.started = q, arrowstream.ProcessingTime(0), false, true
				s.stopQuery()
				return errors.New("the query started; want an analysis error")
			}
		case RuntimePhase:
			if s.query == nil {
				return errors.New("no query was started")
			}
			q := s.query
			if werr := s.waitFor("the query to fail", func() bool { return !q.IsActive() }); werr != nil {
				return werr
			}
			if err = q.Exception(); err == nil {
				return errors.New("the query stopped without an error")
			}
		}
		if substring != "" && !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(substring)) {
			return fmt.Errorf("the error %q does not contain %q", err, substring)
		}
		return nil
	})
}

// FailNextEpoch arms a one-shot fault: the next epoch with input rows (in
// this run or a later one) fails after its input was read and before the
// sink, the state stores and the commit log see it; the query terminates
// with a runtime error.
func FailNextEpoch() Action {
	return newAction("FailNextEpoch", func(s *Stream) error {
		s.faults.arm()
		return nil
	})
}

// PurgeCommitLog deletes the commit-log entries of the epochs below
// threshold (only while the query is stopped).
func PurgeCommitLog(threshold int64) Action {
	return newAction(fmt.Sprintf("PurgeCommitLog(%d)", threshold), func(s *Stream) error {
		return s.purgeCommits(threshold, false)
	})
}

// PurgeCommitLogToLatest deletes every commit-log entry but the newest.
func PurgeCommitLogToLatest() Action {
	return newAction("PurgeCommitLog(latest)", func(s *Stream) error {
		return s.purgeCommits(0, true)
	})
}

func (s *Stream) purgeCommits(threshold int64, latest bool) error {
	if s.running() {
		return errors.New("the commit log can only be purged while the query is stopped")
	}
	log, err := checkpoint.OpenCommitLog(s.ckpt, &checkpoint.Writer{})
	if err != nil {
		return err
	}
	defer log.Close()
	if latest {
		n, _, ok, err := log.Latest()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		threshold = n
	}
	return log.Drop(threshold)
}

// AssertOnQuery runs f on the fixture (its Query, Sink, CheckpointDir);
// an error from f fails the action.
func AssertOnQuery(desc string, f func(s *Stream) error) Action {
	return newAction(fmt.Sprintf("AssertOnQuery(%s)", desc), f)
}

// Comment does nothing; it shows in the dump.
func Comment(text string) Action {
	return newAction("# "+text, func(*Stream) error { return nil })
}
