package arrowstream_test

import (
	"encoding/binary"
	"fmt"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// gsOut is the output of the test functions: key, a value, and the
// processing time or watermark the function saw.
var gsOut = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "at", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func gsRow(k string, v, at int64) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, gsOut)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(k)
	b.Field(1).(*array.Int64Builder).Append(v)
	b.Field(2).(*array.Int64Builder).Append(at)
	return b.NewRecord()
}

func gsInt(s *arrowstream.GroupState) int64 {
	if b := s.Get(); len(b) == 8 {
		return int64(binary.LittleEndian.Uint64(b))
	}
	return 0
}

func gsSet(s *arrowstream.GroupState, v int64) error {
	return s.Update(binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

func gsFixture(t *testing.T, query func(*arrowstream.Session) *arrowstream.DataFrame, fields ...any) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: arrowstream.Update, Query: query, StepTimeout: 10 * time.Second,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "3"},
	})
	return s, s.MustAddSource("input", st.Schema(t, fields...))
}

// epochs runs groups of actions; with restart the query is stopped and
// started again before every group that adds data (restart equivalence:
// the answers must not change). Not before a group without data: as in
// Spark, a restarted query runs no no-data batch before its first batch.
func epochs(restart bool, start st.Action, groups ...[]st.Action) []st.Action {
	out := []st.Action{start}
	for i, g := range groups {
		if restart && i > 0 && strings.HasPrefix(g[0].String(), "AddData") {
			out = append(out, st.StopStream(), start)
		}
		out = append(out, g...)
	}
	return out
}

func forBoth(t *testing.T, f func(t *testing.T, restart bool)) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) { f(t, restart) })
	}
}

func TestGroupStateProcessingTimeTimeout(t *testing.T) {
	// Count per key; the timeout (5 s) is set on the first call only, so a
	// second call clears it (timeouts are not carried over).
	fn := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		now := s.GetCurrentProcessingTimeMs()
		if s.HasTimedOut() {
			if rows.NumRows() != 0 {
				return nil, fmt.Errorf("timed-out call with %d rows", rows.NumRows())
			}
			s.Remove()
			return gsRow(key.ValueStr(0), -1, now), nil
		}
		n := gsInt(s) + rows.NumRows()
		if err := gsSet(s, n); err != nil {
			return nil, err
		}
		if n == 1 {
			if err := s.SetTimeoutDuration(5 * time.Second); err != nil {
				return nil, err
			}
		}
		return gsRow(key.ValueStr(0), n, now), nil
	}
	forBoth(t, func(t *testing.T, restart bool) {
		s, in := gsFixture(t, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupByKey("value").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.ProcessingTimeTimeout, fn)
		}, "value", vector.String)
		st.Run(t, s, epochs(restart, st.StartStream(arrowstream.ProcessingTime(time.Second), true),
			[]st.Action{st.AddData(in, st.Row{"a"}), st.AdvanceClock(time.Second), st.CheckNewAnswer(st.Row{"a", 1, 1000})},
			[]st.Action{st.AddData(in, st.Row{"b"}), st.AdvanceClock(time.Second), st.CheckNewAnswer(st.Row{"b", 1, 2000})},
			[]st.Action{st.AddData(in, st.Row{"b"}), st.AdvanceClock(time.Second), st.CheckNewAnswer(st.Row{"b", 2, 3000}),
				st.AssertStateRows([]int64{2}, nil, nil)},
			// a's timeout is 6000: not timed out at batch timestamp 6000 (strictly less).
			[]st.Action{st.AdvanceClock(3 * time.Second), st.CheckNewAnswer()},
			// No-data batch at 7000: a times out; b has no timeout any more.
			[]st.Action{st.AdvanceClock(time.Second), st.CheckNewAnswer(st.Row{"a", -1, 7000}), st.AssertStateRows([]int64{1}, nil, nil)},
			[]st.Action{st.AdvanceClock(10 * time.Second), st.CheckNewAnswer(), st.AssertStateRows([]int64{1}, nil, nil)},
		)...)
	})
}

func TestGroupStateEventTimeTimeout(t *testing.T) {
	// State = max event time (s); timeout at that time; the watermark seen
	// is in the output.
	fn := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		wm, err := s.GetCurrentWatermarkMs()
		if err != nil {
			return nil, err
		}
		if s.HasTimedOut() {
			s.Remove()
			return gsRow(key.ValueStr(0), -1, wm), nil
		}
		m := gsInt(s)
		ts := rows.Column(1).(*array.Timestamp)
		for i := 0; i < ts.Len(); i++ {
			m = max(m, int64(ts.Value(i))/1e6)
		}
		if err := gsSet(s, m); err != nil {
			return nil, err
		}
		if err := s.SetTimeoutTimestamp(m * 1000); err != nil {
			return nil, err
		}
		return gsRow(key.ValueStr(0), m, wm), nil
	}
	forBoth(t, func(t *testing.T, restart bool) {
		s, in := gsFixture(t, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Select("k", "timestamp_seconds(t) AS et").WithWatermark("et", "10 seconds").
				GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.EventTimeTimeout, fn)
		}, "k", vector.String, "t", vector.Int64)
		st.Run(t, s, epochs(restart, st.StartStream(arrowstream.ProcessingTime(0), false),
			[]st.Action{st.AddData(in, st.Row{"a", 20}), st.CheckNewAnswer(st.Row{"a", 20, 0})},
			// Watermark 20 s: a's timeout 20000 is not below it.
			[]st.Action{st.AddData(in, st.Row{"b", 30}), st.CheckNewAnswer(st.Row{"b", 30, 10000})},
			// Watermark 21 s: a times out (in the no-data batch).
			[]st.Action{st.AddData(in, st.Row{"c", 31}), st.CheckNewAnswer(st.Row{"c", 31, 20000}, st.Row{"a", -1, 21000})},
			// Late rows are dropped before the function.
			[]st.Action{st.AddData(in, st.Row{"a", 5}, st.Row{"b", 21}), st.CheckNewAnswer(), st.AssertStateRows([]int64{2}, nil, []int64{2})},
		)...)
	})
}

func TestGroupStateRemove(t *testing.T) {
	// Rows are ops: add increments, rm removes, nil updates with nil, to
	// sets a processing-time timeout (not configured), wm asks for the
	// watermark (there is none).
	fn := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		ops := rows.Column(1).(*array.String)
		for i := 0; i < ops.Len(); i++ {
			switch ops.Value(i) {
			case "add":
				if err := gsSet(s, gsInt(s)+1); err != nil {
					return nil, err
				}
			case "rm":
				s.Remove()
			case "nil":
				if err := s.Update(nil); err != nil {
					return nil, err
				}
			case "to":
				if err := s.SetTimeoutDuration(time.Second); err != nil {
					return nil, err
				}
			case "wm":
				if _, err := s.GetCurrentWatermarkMs(); err != nil {
					return nil, err
				}
			}
		}
		exists := int64(0)
		if s.Exists() {
			exists = 1
		}
		return gsRow(key.ValueStr(0), gsInt(s), exists), nil
	}
	query := func(sess *arrowstream.Session) *arrowstream.DataFrame {
		return sess.ReadStream("input").GroupByKey("k").MapGroupsWithState(gsOut, arrowstream.NoTimeout, fn)
	}
	s, in := gsFixture(t, query, "k", vector.String, "op", vector.String)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", "add"}, st.Row{"a", "add"}, st.Row{"b", "add"}),
		st.CheckNewAnswer(st.Row{"a", 2, 1}, st.Row{"b", 1, 1}),
		st.AssertStateRows([]int64{2}, []int64{2}, nil),
		st.AddData(in, st.Row{"a", "rm"}),
		st.CheckNewAnswer(st.Row{"a", 0, 0}),
		st.AssertStateRows([]int64{1}, []int64{0}, nil),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		// Update after remove defines the state again, from scratch.
		st.AddData(in, st.Row{"a", "rm"}, st.Row{"a", "add"}, st.Row{"b", "rm"}),
		st.CheckNewAnswer(st.Row{"a", 1, 1}, st.Row{"b", 0, 0}),
		st.AssertStateRows([]int64{1}, []int64{1}, nil),
		st.AddData(in, st.Row{"a", "nil"}),
		st.ExpectFailure(st.RuntimePhase, "use Remove"),
	)
	for _, c := range []struct{ op, msg string }{{"to", "without ProcessingTimeTimeout"}, {"wm", "no watermark"}} {
		s, in := gsFixture(t, query, "k", vector.String, "op", vector.String)
		st.Run(t, s,
			st.StartStream(arrowstream.ProcessingTime(0), false),
			st.AddData(in, st.Row{"a", c.op}),
			st.ExpectFailure(st.RuntimePhase, c.msg),
		)
	}
}

func TestGroupStateAnalysis(t *testing.T) {
	fn := func(arrow.Array, arrow.Record, *arrowstream.GroupState) (arrow.Record, error) { return nil, nil }
	for _, c := range []struct {
		name string
		df   func(*arrowstream.Session) *arrowstream.DataFrame
		mode arrowstream.OutputMode
		msg  string
	}{
		{"event time without watermark", func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.EventTimeTimeout, fn)
		}, arrowstream.Update, "watermark"},
		{"append function in an update query", func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Append, arrowstream.NoTimeout, fn)
		}, arrowstream.Update, "append mode is not supported with update output mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			s := st.NewT(t, st.Options{Allocator: mem, OutputMode: c.mode, Query: c.df, StepTimeout: 10 * time.Second})
			s.MustAddSource("input", st.Schema(t, "k", vector.String, "t", vector.Int64))
			st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, c.msg))
		})
	}
}
