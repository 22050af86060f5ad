package streamtest

import (
	"errors"
	"fmt"

	"github.com/arrowstream/arrowstream/memsink"
)

// CheckMode says which sink rows a check compares.
type CheckMode int

const (
	// Answer compares all committed data (Spark's CheckAnswer).
	Answer CheckMode = iota
	// LastBatch compares the latest epoch's rows (CheckLastBatch).
	LastBatch
	// NewAnswer compares the rows of the epochs committed since the
	// previous check (CheckNewAnswer).
	NewAnswer
)

func (m CheckMode) String() string {
	switch m {
	case LastBatch:
		return "CheckLastBatch"
	case NewAnswer:
		return "CheckNewAnswer"
	}
	return "CheckAnswer"
}

// Check is a check action: it lets the query process all available input
// (including the no-data epochs it causes; with a manual clock it only
// waits until the query waits for its next trigger; a stopped query is
// compared as it is), then compares the sink's rows with Rows.
type Check struct {
	Mode    CheckMode
	Rows    []Row
	Ordered bool
}

// CheckAnswer checks all committed data, as a multiset.
func CheckAnswer(rows ...Row) *Check { return &Check{Mode: Answer, Rows: rows} }

// CheckLastBatch checks the latest epoch's rows, as a multiset.
func CheckLastBatch(rows ...Row) *Check { return &Check{Mode: LastBatch, Rows: rows} }

// CheckNewAnswer checks the rows committed since the previous check, as a
// multiset.
func CheckNewAnswer(rows ...Row) *Check { return &Check{Mode: NewAnswer, Rows: rows} }

// InOrder makes the check compare rows in order.
func (c *Check) InOrder() *Check { c.Ordered = true; return c }

func (c *Check) String() string {
	s := fmt.Sprintf("%s(%s)", c.Mode, describeRows(c.Rows))
	if c.Ordered {
		s += " in order"
	}
	return s
}

func (c *Check) run(s *Stream) error {
	if err := s.settle(); err != nil {
		return err
	}
	got, err := s.sinkRows(c.Mode)
	if err != nil {
		return err
	}
	if diff := compareRows(c.Rows, got, c.Ordered); diff != "" {
		return fmt.Errorf("%s\n  want:\n%s  got:\n%s", diff, FormatRows(c.Rows), FormatRows(got))
	}
	return nil
}

// sinkRows reads the sink's rows for a check and remembers the latest
// epoch for the next NewAnswer.
func (s *Stream) sinkRows(mode CheckMode) ([]Row, error) {
	t := s.Sink()
	if t == nil {
		return nil, errors.New("no sink: the query was never started")
	}
	var snap *memsink.Snapshot
	switch mode {
	case LastBatch:
		snap = t.LatestBatchData()
	case NewAnswer:
		var err error
		if snap, err = t.DataSinceBatch(s.lastChecked); err != nil {
			return nil, err
		}
	default:
		snap = t.AllData()
	}
	latest := snap.LatestEpoch()
	rows := snapshotRows(snap)
	s.lastChecked = latest
	return rows, nil
}

// SinkAnswer returns every row in the sink (what CheckAnswer compares),
// after letting the query process what is available.
func (s *Stream) SinkAnswer() ([]Row, error) {
	if err := s.settle(); err != nil {
		return nil, err
	}
	return s.sinkRows(Answer)
}

// DiffRows compares two row multisets as CheckAnswer does and describes
// the first difference ("" when they are equal).
func DiffRows(want, got []Row) string { return compareRows(want, got, false) }

// SubtractRows returns the rows of a left over after taking out, as
// multisets, the rows of b (compared as CheckAnswer compares values).
func SubtractRows(a, b []Row) []Row {
	used := make([]bool, len(b))
	var out []Row
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && rowEqual(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}
