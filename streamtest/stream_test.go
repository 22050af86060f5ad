package streamtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

func newFixture(t *testing.T, mode arrowstream.OutputMode, query func(*arrowstream.Session) *arrowstream.DataFrame) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: mode, Query: query, StepTimeout: 10 * time.Second,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	in := s.MustAddSource("input", st.Schema(t, "value", vector.Int32))
	return s, in
}

func runningCount(sess *arrowstream.Session) *arrowstream.DataFrame {
	return sess.ReadStream("input").GroupBy("value").Agg("count(*)")
}

func TestRunningCountAcrossRestart(t *testing.T) {
	s, in := newFixture(t, arrowstream.Update, runningCount)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{3}),
		st.CheckLastBatch(st.Row{3, 1}),
		st.AddData(in, st.Row{3}, st.Row{2}),
		st.CheckLastBatch(st.Row{3, 2}, st.Row{2, 1}),
		st.AssertStateRows([]int64{2}, []int64{3}, []int64{0}),
		st.StopStream(),
		st.AddData(in, st.Row{3}, st.Row{2}, st.Row{1}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckNewAnswer(st.Row{3, 3}, st.Row{2, 2}, st.Row{1, 1}),
		st.CheckAnswer(st.Row{3, 1}, st.Row{3, 2}, st.Row{2, 1}, st.Row{3, 3}, st.Row{2, 2}, st.Row{1, 1}),
		st.AssertLastDataProgressState("numRowsTotal", 3),
	)
}

func TestFailNextEpochRerunsFromOffsetLog(t *testing.T) {
	s, in := newFixture(t, arrowstream.Update, runningCount)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{1}),
		st.CheckLastBatch(st.Row{1, 1}),
		st.FailNextEpoch(),
		st.AddData(in, st.Row{1}, st.Row{2}),
		st.ExpectFailure(st.RuntimePhase, "injected"),
		st.CheckAnswer(st.Row{1, 1}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{1, 2}, st.Row{2, 1}),
	)
}

func TestManualClockTriggers(t *testing.T) {
	s, in := newFixture(t, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
		return sess.ReadStream("input").Select("value", "CAST(current_timestamp() AS BIGINT) AS ts")
	})
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(10*time.Second), true),
		st.AddData(in, st.Row{1}),
		st.CheckAnswer(), // no trigger is due before the clock moves
		st.AdvanceClock(10*time.Second),
		st.CheckAnswer(st.Row{1, 10}),
		st.AddData(in, st.Row{2}),
		st.AdvanceClock(5*time.Second),
		st.CheckNewAnswer(),
		st.AdvanceClock(5*time.Second),
		st.CheckNewAnswer(st.Row{2, 20}),
		st.StopStream(),
		st.AdvanceClockDirectly(time.Minute),
		st.AddData(in, st.Row{3}),
		st.StartStream(arrowstream.ProcessingTime(10*time.Second), true),
		st.CheckNewAnswer(st.Row{3, 80}),
	)
}

func TestFailureDump(t *testing.T) {
	s, in := newFixture(t, arrowstream.Update, runningCount)
	err := s.Run(
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{7}),
		st.CheckLastBatch(st.Row{7, 2}),
	)
	if err == nil {
		t.Fatal("a wrong answer passed")
	}
	for _, want := range []string{"action 2", "missing [7, 2]", "unexpected [7, 1]", "== offset log", "== commit log", "  0: ", "== sink epochs ==", "0: [7,1]", "=>   2 CheckLastBatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("dump lacks %q:\n%s", want, err)
		}
	}
}

func TestAnalysisFailure(t *testing.T) {
	s, in := newFixture(t, arrowstream.Append, runningCount)
	st.Run(t, s,
		st.AddData(in, st.Row{1}),
		st.ExpectFailure(st.AnalysisPhase, "append"),
	)
	s2, _ := newFixture(t, arrowstream.Update, runningCount)
	if err := s2.Run(st.ExpectFailure(st.AnalysisPhase, "")); err == nil || !strings.Contains(err.Error(), "the query started") {
		t.Fatalf("a query that starts passed ExpectFailure(analysis): %v", err)
	}
}

func TestDirectSink(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s, err := st.New(st.Options{Dir: t.TempDir(), Allocator: mem, SinkSchema: st.Schema(t, "value", vector.Int32), SinkMode: arrowstream.Complete})
	if err != nil {
		t.Fatal(err)
	}
	st.Run(t, s,
		st.SinkAssert(st.SinkExpectation{CheckLatestEpoch: true, LatestEpoch: -1, CheckAllData: true}),
		st.SinkWrite(0, true, st.Row{1}, st.Row{2}),
		st.SinkWrite(1, true, st.Row{3}),
		st.SinkWrite(1, true, st.Row{4}),
		st.SinkAssert(st.SinkExpectation{CheckLatestEpoch: true, LatestEpoch: 1, CheckLatestBatch: true, LatestBatch: []st.Row{{3}}, CheckAllData: true, AllData: []st.Row{{3}}}),
	)
	if err := s.Run(st.SinkWrite(2, false, st.Row{1})); err == nil {
		t.Fatal("an append write to a complete sink passed")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAssertOnQueryAndPurge(t *testing.T) {
	s, in := newFixture(t, arrowstream.Complete, runningCount)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{1}),
		st.CheckAnswer(st.Row{1, 1}),
		st.AddData(in, st.Row{1}),
		st.CheckAnswer(st.Row{1, 2}),
		st.AssertOnQuery("two epochs", func(s *st.Stream) error {
			if p := s.Query().LastProgress(); p == nil || p.BatchID < 1 {
				return fmt.Errorf("progress %v", p)
			}
			return nil
		}),
	)
	if err := s.Do(st.PurgeCommitLogToLatest()); err == nil {
		t.Fatal("purged the commit log of a running query")
	}
	// Without any commit entry epoch 1 re-runs on the state of epoch 0 and
	// gives the same answer (the sink was cleared, so it takes it).
	st.Run(t, s,
		st.StopStream(),
		st.PurgeCommitLog(2),
		st.ClearSink(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckNewAnswer(st.Row{1, 2}),
		st.AssertEventTimeStatsEmpty(),
	)
}
