package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/streamtest"
)

// stepFields lists the fields each step kind accepts besides "action"
// (streamtest/testdata/conformance/FORMAT.md, "Steps").
var stepFields = map[string][]string{
	"add":                             {"source", "rows"},
	"multi_add":                       {"adds"},
	"check":                           {"mode", "rows", "ordered"},
	"start":                           {"trigger", "manual_clock"},
	"stop":                            {},
	"restart":                         {},
	"advance_clock":                   {"ms"},
	"advance_clock_directly":          {"ms"},
	"process_all_available":           {},
	"await_termination":               {},
	"expect_failure":                  {"phase", "spark_message", "spark_exception"},
	"assert_state_rows":               {"total", "updated", "dropped_by_watermark"},
	"assert_last_progress_state":      nil, // metric names
	"assert_last_data_progress_state": nil,
	"assert_event_time_stats":         {"min", "max", "avg", "watermark"},
	"assert_event_time_stats_empty":   {},
	"await_progress_timestamp":        {"value"},
	"fail_next_epoch":                 {},
	"purge_commit_log":                {"threshold"},
	"clear_sink":                      {},
	"sink_write":                      {"epoch", "truncate", "rows"},
	"sink_assert":                     {"latest_epoch", "latest_batch", "all_data"},
	"comment":                         {"text"},
}

// step is a decoded step, ready to become fixture actions.
type step struct {
	kind string

	adds    []sourceRows        // add, multi_add
	check   *streamtest.Check   // check
	trigger arrowstream.Trigger // start
	manual  bool                // start
	d       time.Duration       // advance_clock[_directly]
	phase   streamtest.Phase    // expect_failure
	state   [3][]int64          // assert_state_rows: total, updated, dropped
	metrics []*streamtest.ProgressState
	stats   map[string]string // assert_event_time_stats
	value   string            // await_progress_timestamp
	purge   int64             // purge_commit_log
	latest  bool              // purge_commit_log "latest"
	epoch   int64             // sink_write
	trunc   bool              // sink_write
	rows    []streamtest.Row  // sink_write
	expect  streamtest.SinkExpectation
	text    string // comment
}

type sourceRows struct {
	source string
	rows   []streamtest.Row
}

func validateStep(sc *Scenario, st Step) error {
	_, err := decodeStep(sc, st)
	return err
}

// decodeStep checks a step's fields and decodes them.
func decodeStep(sc *Scenario, st Step) (*step, error) {
	allowed, ok := stepFields[st.Action]
	if !ok {
		return nil, fmt.Errorf("unknown action %q", st.Action)
	}
	if allowed != nil {
		for k := range st.Fields {
			if !contains(allowed, k) {
				return nil, fmt.Errorf("unknown field %q (the step takes %s)", k, strings.Join(allowed, ", "))
			}
		}
	}
	s := &step{kind: st.Action}
	f := st.Fields
	get := func(key string, v any) error {
		raw, ok := f[key]
		if !ok {
			return fmt.Errorf("missing field %q", key)
		}
		if err := decodeJSON(raw, v); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		return nil
	}
	opt := func(key string, v any) (bool, error) {
		if raw, ok := f[key]; !ok || string(raw) == "null" {
			return false, nil
		}
		return true, get(key, v)
	}
	var err error
	switch st.Action {
	case "add":
		var a struct {
			Source string  `json:"source"`
			Rows   [][]any `json:"rows"`
		}
		for _, k := range []string{"source", "rows"} {
			if _, ok := f[k]; !ok && err == nil {
				err = fmt.Errorf("missing field %q", k)
			}
		}
		if err == nil {
			err = decodeJSON(mustMarshal(f), &a)
		}
		if err == nil {
			var sr sourceRows
			if sr, err = sourceAdd(sc, a.Source, a.Rows); err == nil {
				s.adds = []sourceRows{sr}
			}
		}
	case "multi_add":
		var adds []struct {
			Source string  `json:"source"`
			Rows   [][]any `json:"rows"`
		}
		if err = get("adds", &adds); err == nil && len(adds) == 0 {
			err = fmt.Errorf("no adds")
		}
		for i := 0; err == nil && i < len(adds); i++ {
			var sr sourceRows
			if sr, err = sourceAdd(sc, adds[i].Source, adds[i].Rows); err == nil {
				s.adds = append(s.adds, sr)
			}
		}
	case "check":
		var c struct {
			Mode    string  `json:"mode"`
			Rows    [][]any `json:"rows"`
			Ordered bool    `json:"ordered"`
		}
		if err = decodeJSON(mustMarshal(f), &c); err == nil {
			if c.Rows == nil {
				_, present := f["rows"]
				if !present {
					err = fmt.Errorf("missing field %q", "rows")
					break
				}
			}
			s.check = &streamtest.Check{Rows: expectedRows(c.Rows), Ordered: c.Ordered}
			switch c.Mode {
			case "answer", "":
				s.check.Mode = streamtest.Answer
			case "last_batch":
				s.check.Mode = streamtest.LastBatch
			case "new_answer":
				s.check.Mode = streamtest.NewAnswer
			default:
				err = fmt.Errorf("unknown check mode %q (want answer, last_batch or new_answer)", c.Mode)
			}
		}
	case "start":
		var trig string
		if _, err = opt("trigger", &trig); err == nil {
			if s.trigger, err = parseTrigger(trig); err == nil {
				_, err = opt("manual_clock", &s.manual)
			}
		}
	case "advance_clock", "advance_clock_directly":
		var ms json.Number
		if err = get("ms", &ms); err == nil {
			n, perr := ms.Int64()
			if perr != nil || n < 0 || n > int64(365*24*time.Hour/time.Millisecond) {
				err = fmt.Errorf("ms %s is not a duration in milliseconds", ms)
			}
			s.d = time.Duration(n) * time.Millisecond
		}
	case "expect_failure":
		var phase string
		if err = get("phase", &phase); err == nil {
			switch phase {
			case "analysis":
				s.phase = streamtest.AnalysisPhase
			case "runtime":
				s.phase = streamtest.RuntimePhase
			default:
				err = fmt.Errorf("unknown phase %q (want analysis or runtime)", phase)
			}
		}
	case "assert_state_rows":
		for i, key := range []string{"total", "updated", "dropped_by_watermark"} {
			if err == nil {
				var l []int64
				var present bool
				if present, err = opt(key, &l); present && l == nil {
					l = []int64{}
				}
				s.state[i] = l
			}
		}
		if s.state[2] == nil {
			// Spark's helper asserts no drops when the test says nothing.
			switch {
			case s.state[0] != nil:
				s.state[2] = make([]int64, len(s.state[0]))
			case s.state[1] != nil:
				s.state[2] = make([]int64, len(s.state[1]))
			}
		}
	case "assert_last_progress_state", "assert_last_data_progress_state":
		s.metrics, err = progressMetrics(f, st.Action == "assert_last_data_progress_state")
	case "assert_event_time_stats":
		s.stats = map[string]string{}
		for k := range f {
			var v string
			if err = get(k, &v); err != nil {
				break
			}
			s.stats[k] = v
		}
		if err == nil && len(s.stats) == 0 {
			err = fmt.Errorf("no statistic to compare")
		}
	case "await_progress_timestamp":
		if err = get("value", &s.value); err == nil {
			_, err = time.Parse("2006-01-02T15:04:05.000Z", s.value)
		}
	case "purge_commit_log":
		var raw any
		if err = get("threshold", &raw); err == nil {
			switch x := raw.(type) {
			case string:
				if x != "latest" {
					err = fmt.Errorf("threshold %q: want an epoch or \"latest\"", x)
				}
				s.latest = true
			case json.Number:
				s.purge, err = x.Int64()
			default:
				err = fmt.Errorf("threshold %v: want an epoch or \"latest\"", raw)
			}
		}
	case "sink_write":
		var rows [][]any
		if err = get("epoch", &s.epoch); err == nil {
			if _, err = opt("truncate", &s.trunc); err == nil {
				if err = get("rows", &rows); err == nil {
					s.rows, err = convertRows(sc.SinkColumns, rows)
				}
			}
		}
		if err == nil && len(sc.SinkColumns) == 0 {
			err = fmt.Errorf("sink_write needs the scenario's sink_columns")
		}
	case "sink_assert":
		s.expect, err = sinkExpectation(f)
	case "comment":
		_, err = opt("text", &s.text)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mustMarshal(f map[string]json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(f)
	return b
}

func sourceAdd(sc *Scenario, source string, rows [][]any) (sourceRows, error) {
	cols, ok := sc.Sources[source]
	if !ok {
		return sourceRows{}, fmt.Errorf("unknown source %q", source)
	}
	conv, err := convertRows(cols, rows)
	if err != nil {
		return sourceRows{}, fmt.Errorf("source %s: %w", source, err)
	}
	return sourceRows{source: source, rows: conv}, nil
}

// parseTrigger reads "processing_time:0", "processing_time:10s", "once",
// "available_now" ("" is processing_time:0).
func parseTrigger(s string) (arrowstream.Trigger, error) {
	switch s {
	case "":
		return arrowstream.ProcessingTime(0), nil
	case "once":
		return arrowstream.Once(), nil
	case "available_now":
		return arrowstream.AvailableNow(), nil
	}
	if d, ok := strings.CutPrefix(s, "processing_time:"); ok {
		dur, err := arrowstream.ParseDuration(d)
		if err != nil {
			return arrowstream.Trigger{}, fmt.Errorf("trigger %q: %w", s, err)
		}
		return arrowstream.ProcessingTime(dur), nil
	}
	return arrowstream.Trigger{}, fmt.Errorf("unknown trigger %q (want processing_time:<duration>, once or available_now)", s)
}

// progressMetrics reads the metrics of assert_last[_data]_progress_state:
// a number for the first stateful operator, a list for every operator.
func progressMetrics(f map[string]json.RawMessage, dataOnly bool) ([]*streamtest.ProgressState, error) {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil, fmt.Errorf("no metric to compare")
	}
	var out []*streamtest.ProgressState
	for _, k := range keys {
		p := &streamtest.ProgressState{Metric: k, DataOnly: dataOnly}
		var n int64
		if err := decodeJSON(f[k], &n); err == nil {
			p.Values = []int64{n}
		} else if err := decodeJSON(f[k], &p.Values); err == nil && len(p.Values) > 0 {
			p.AllOperators = true
		} else {
			return nil, fmt.Errorf("metric %s: want a number or a non-empty list of numbers, got %s", k, f[k])
		}
		out = append(out, p)
	}
	return out, nil
}

func sinkExpectation(f map[string]json.RawMessage) (streamtest.SinkExpectation, error) {
	var e streamtest.SinkExpectation
	if raw, ok := f["latest_epoch"]; ok {
		e.CheckLatestEpoch = true
		e.LatestEpoch = -1
		if string(raw) != "null" {
			if err := decodeJSON(raw, &e.LatestEpoch); err != nil || e.LatestEpoch < 0 {
				return e, fmt.Errorf("latest_epoch %s: want an epoch or null", raw)
			}
		}
	}
	for _, c := range []struct {
		key  string
		flag *bool
		rows *[]streamtest.Row
	}{{"latest_batch", &e.CheckLatestBatch, &e.LatestBatch}, {"all_data", &e.CheckAllData, &e.AllData}} {
		raw, ok := f[c.key]
		if !ok {
			continue
		}
		var rows [][]any
		if err := decodeJSON(raw, &rows); err != nil {
			return e, fmt.Errorf("field %q: %w", c.key, err)
		}
		*c.flag, *c.rows = true, expectedRows(rows)
	}
	return e, nil
}

// actions returns the fixture actions of a decoded step.
func (s *step) actions(sources map[string]*streamtest.Source) []streamtest.Action {
	switch s.kind {
	case "add", "multi_add":
		adds := make([]streamtest.SourceRows, len(s.adds))
		for i, a := range s.adds {
			adds[i] = streamtest.SourceRows{Source: sources[a.source], Rows: a.rows}
		}
		if s.kind == "add" {
			return []streamtest.Action{streamtest.AddData(adds[0].Source, adds[0].Rows...)}
		}
		return []streamtest.Action{streamtest.MultiAddData(adds...)}
	case "check":
		c := *s.check
		return []streamtest.Action{&c}
	case "start":
		return []streamtest.Action{streamtest.StartStream(s.trigger, s.manual)}
	case "stop":
		return []streamtest.Action{streamtest.StopStream()}
	case "restart":
		return []streamtest.Action{streamtest.Restart()}
	case "advance_clock":
		return []streamtest.Action{streamtest.AdvanceClock(s.d)}
	case "advance_clock_directly":
		return []streamtest.Action{streamtest.AdvanceClockDirectly(s.d)}
	case "process_all_available":
		return []streamtest.Action{streamtest.ProcessAllAvailable()}
	case "await_termination":
		return []streamtest.Action{streamtest.AwaitTermination()}
	case "expect_failure":
		return []streamtest.Action{streamtest.ExpectFailure(s.phase, "")}
	case "assert_state_rows":
		return []streamtest.Action{streamtest.AssertStateRows(s.state[0], s.state[1], s.state[2])}
	case "assert_last_progress_state", "assert_last_data_progress_state":
		out := make([]streamtest.Action, len(s.metrics))
		for i, m := range s.metrics {
			c := *m
			out[i] = &c
		}
		return out
	case "assert_event_time_stats":
		return []streamtest.Action{streamtest.AssertEventTimeStats(s.stats)}
	case "assert_event_time_stats_empty":
		return []streamtest.Action{streamtest.AssertEventTimeStatsEmpty()}
	case "await_progress_timestamp":
		return []streamtest.Action{streamtest.AwaitProgressTimestamp(s.value)}
	case "fail_next_epoch":
		return []streamtest.Action{streamtest.FailNextEpoch()}
	case "purge_commit_log":
		if s.latest {
			return []streamtest.Action{streamtest.PurgeCommitLogToLatest()}
		}
		return []streamtest.Action{streamtest.PurgeCommitLog(s.purge)}
	case "clear_sink":
		return []streamtest.Action{streamtest.ClearSink()}
	case "sink_write":
		return []streamtest.Action{streamtest.SinkWrite(s.epoch, s.trunc, s.rows...)}
	case "sink_assert":
		return []streamtest.Action{streamtest.SinkAssert(s.expect)}
	case "comment":
		return []streamtest.Action{streamtest.Comment(s.text)}
	}
	return nil
}
