package streamtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// AssertStateRows checks the state metrics of the stateful operators
// (downstream first, as Spark lists them): total is numRowsTotal of the
// last progress report; updated and droppedByWatermark are numRowsUpdated
// and numRowsDroppedByWatermark summed over the reports of the current run
// after the previous AssertStateRows of the run, counting only reports
// with as many stateful operators as the last one (Spark's
// StateStoreMetricsTest.assertNumStateRows). A nil list is not compared.
func AssertStateRows(total, updated, droppedByWatermark []int64) Action {
	desc := fmt.Sprintf("AssertStateRows(total %v, updated %v, dropped by watermark %v)", total, updated, droppedByWatermark)
	return newAction(desc, func(s *Stream) error {
		q, err := s.currentQuery()
		if err != nil {
			return err
		}
		reports := q.RecentProgress()
		if len(reports) == 0 {
			return errors.New("no progress reported yet")
		}
		last := reports[len(reports)-1]
		n := len(last.StateOperators)
		start := 0
		for i, p := range reports {
			if p == s.stateMark {
				start = i + 1
			}
		}
		s.stateMark = last
		counted := append(append([]*arrowstream.StreamingQueryProgress(nil), s.carried...), reports[start:]...)
		s.carried = nil
		sumUpdated, sumDropped := make([]int64, n), make([]int64, n)
		for _, p := range counted {
			if len(p.StateOperators) != n {
				continue
			}
			for i, op := range p.StateOperators {
				sumUpdated[i] += op.NumRowsUpdated
				sumDropped[i] += op.NumRowsDroppedByWatermark
			}
		}
		totals := make([]int64, n)
		for i, op := range last.StateOperators {
			totals[i] = op.NumRowsTotal
		}
		var diffs []string
		for _, c := range []struct {
			name      string
			want, got []int64
		}{{"numRowsTotal", total, totals}, {"numRowsUpdated", updated, sumUpdated}, {"numRowsDroppedByWatermark", droppedByWatermark, sumDropped}} {
			if c.want != nil && !int64sEqual(c.want, c.got) {
				diffs = append(diffs, fmt.Sprintf("%s is %v, want %v", c.name, c.got, c.want))
			}
		}
		if len(diffs) > 0 {
			return errors.New(strings.Join(diffs, "; "))
		}
		return nil
	})
}

func int64sEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ProgressState checks one metric of the stateful operators in a progress
// report: of the first operator, or (AllOperators) of every operator in
// order, the report having exactly len(Values) of them. The report is the
// last one, or with DataOnly the last one with input rows. Metric is a
// field of Spark's stateOperators entry (numRowsTotal, numRowsUpdated,
// numRowsRemoved, numRowsDroppedByWatermark, ...) or customMetrics.NAME.
type ProgressState struct {
	Metric       string
	Values       []int64
	AllOperators bool
	DataOnly     bool
}

// AssertLastProgressState checks metric of the first stateful operator in
// the last progress report.
func AssertLastProgressState(metric string, value int64) *ProgressState {
	return &ProgressState{Metric: metric, Values: []int64{value}}
}

// AssertLastDataProgressState checks metric of the first stateful
// operator in the last progress report with input rows.
func AssertLastDataProgressState(metric string, value int64) *ProgressState {
	return &ProgressState{Metric: metric, Values: []int64{value}, DataOnly: true}
}

// ForAllOperators makes the check cover every stateful operator, values
// in the report's order (downstream first).
func (p *ProgressState) ForAllOperators(values ...int64) *ProgressState {
	p.Values, p.AllOperators = values, true
	return p
}

func (p *ProgressState) String() string {
	which := "AssertLastProgressState"
	if p.DataOnly {
		which = "AssertLastDataProgressState"
	}
	if p.AllOperators {
		return fmt.Sprintf("%s(%s = %v for all operators)", which, p.Metric, p.Values)
	}
	return fmt.Sprintf("%s(%s = %v)", which, p.Metric, p.Values)
}

func (p *ProgressState) run(s *Stream) error {
	prog, err := s.progress(p.DataOnly)
	if err != nil {
		return err
	}
	ops := prog.StateOperators
	if p.AllOperators && len(ops) != len(p.Values) {
		return fmt.Errorf("the progress of batch %d has %d stateful operators, want %d", prog.BatchID, len(ops), len(p.Values))
	}
	if len(ops) < len(p.Values) {
		return fmt.Errorf("the progress of batch %d has no stateful operator", prog.BatchID)
	}
	got := make([]int64, len(p.Values))
	for i := range p.Values {
		v, err := stateMetric(ops[i], p.Metric)
		if err != nil {
			return err
		}
		got[i] = v
	}
	if !int64sEqual(got, p.Values) {
		return fmt.Errorf("%s is %v in the progress of batch %d, want %v", p.Metric, got, prog.BatchID, p.Values)
	}
	return nil
}

// stateMetric reads a metric of a stateful operator by its JSON name.
func stateMetric(op arrowstream.StateOperatorProgress, metric string) (int64, error) {
	if name, ok := strings.CutPrefix(metric, "customMetrics."); ok {
		v, ok := op.CustomMetrics[name]
		if !ok {
			return 0, fmt.Errorf("operator %s has no custom metric %q", op.OperatorName, name)
		}
		return v, nil
	}
	b, err := json.Marshal(op)
	if err != nil {
		return 0, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return 0, err
	}
	raw, ok := fields[metric]
	var v int64
	if !ok || json.Unmarshal(raw, &v) != nil {
		names := make([]string, 0, len(fields))
		for k := range fields {
			names = append(names, k)
		}
		sort.Strings(names)
		return 0, fmt.Errorf("no numeric state metric %q (known: %s)", metric, strings.Join(names, ", "))
	}
	return v, nil
}

// currentQuery returns the current run, an error before the first start.
func (s *Stream) currentQuery() (*arrowstream.StreamingQuery, error) {
	if s.query == nil {
		return nil, errors.New("no query was started")
	}
	return s.query, nil
}

// progress returns the last progress report of the current run, or the
// last one with input rows.
func (s *Stream) progress(dataOnly bool) (*arrowstream.StreamingQueryProgress, error) {
	q, err := s.currentQuery()
	if err != nil {
		return nil, err
	}
	reports := q.RecentProgress()
	for i := len(reports) - 1; i >= 0; i-- {
		if !dataOnly || reports[i].NumInputRows > 0 {
			return reports[i], nil
		}
	}
	if dataOnly {
		return nil, errors.New("no progress report with input rows in this run")
	}
	return nil, errors.New("no progress reported in this run")
}

// AssertEventTimeStats checks the eventTime map (min, max, avg,
// watermark as ISO-8601 UTC strings) of the last progress report with
// input rows; only the keys of want are compared.
func AssertEventTimeStats(want map[string]string) Action {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + want[k]
	}
	return newAction("AssertEventTimeStats("+strings.Join(parts, ", ")+")", func(s *Stream) error {
		p, err := s.progress(true)
		if err != nil {
			return err
		}
		var diffs []string
		for _, k := range keys {
			if got, ok := p.EventTime[k]; !ok || got != want[k] {
				if !ok {
					got = "(absent)"
				}
				diffs = append(diffs, fmt.Sprintf("%s is %s, want %s", k, got, want[k]))
			}
		}
		if len(diffs) > 0 {
			return fmt.Errorf("eventTime of batch %d: %s (all: %v)", p.BatchID, strings.Join(diffs, "; "), p.EventTime)
		}
		return nil
	})
}

// AssertEventTimeStatsEmpty checks that the last progress report with
// input rows has no eventTime map (a query without a watermark).
func AssertEventTimeStatsEmpty() Action {
	return newAction("AssertEventTimeStatsEmpty", func(s *Stream) error {
		p, err := s.progress(true)
		if err != nil {
			return err
		}
		if len(p.EventTime) != 0 {
			return fmt.Errorf("eventTime of batch %d is %v, want none", p.BatchID, p.EventTime)
		}
		return nil
	})
}

// AwaitProgressTimestamp waits until the latest progress report's
// timestamp is value (ISO-8601 UTC with milliseconds).
func AwaitProgressTimestamp(value string) Action {
	return newAction(fmt.Sprintf("AwaitProgressTimestamp(%s)", value), func(s *Stream) error {
		q, err := s.currentQuery()
		if err != nil {
			return err
		}
		match := func() bool {
			p := q.LastProgress()
			return p != nil && p.Timestamp == value
		}
		if err := s.waitFor("a progress report with timestamp "+value, func() bool { return match() || !q.IsActive() }); err != nil {
			return err
		}
		if !match() {
			return fmt.Errorf("the query ended (error: %v) before reporting progress at %s", q.Exception(), value)
		}
		return nil
	})
}
