package arrowstream_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// max_by and min_by keep (value, ordering) as partial state in a
// streaming aggregation, across restarts; a tie on the ordering goes to
// the later row, also when it arrives in a later epoch (Spark's merge
// keeps the old state only when its ordering is strictly better).
func TestStreamingMaxByMinByAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT v % 2 AS p, max_by(k, v) AS mx, min_by(k, v) AS mn FROM STREAM input GROUP BY v % 2")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"b", 3, 0}, st.Row{"c", 2, 0}),
		st.CheckLastBatch(st.Row{1, "b", "a"}, st.Row{0, "c", "c"}),
		st.StopStream(),
		st.AddData(in, st.Row{"d", 3, 0}, st.Row{"e", 1, 0}, st.Row{"f", nil, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{1, "d", "e"}, st.Row{nil, nil, nil}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"g", 4, 0}, st.Row{"h", 0, 0}),
		st.CheckLastBatch(st.Row{0, "g", "h"}),
	)
}

// try_avg (double and decimal) and sum/avg of a year-month interval keep
// (sum, count) as partial state, across restarts (months 1 and 2 average
// to 1.5, rounded HALF_UP to 2, as Spark divides intervals).
func TestStreamingTryAvgAndIntervalSumAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, try_avg(v) AS a, CAST(try_avg(CAST(v AS DECIMAL(10, 1))) AS DOUBLE) AS d, "+
			"sum(make_ym_interval(0, CAST(v AS INT))) AS s, avg(make_ym_interval(0, CAST(v AS INT))) AS m "+
			"FROM STREAM input GROUP BY k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 2, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"a", 1.5, 1.5, months(3), months(2)}, st.Row{"b", nil, nil, nil, nil}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 6, 0}, st.Row{"b", 4, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 3.0, 3.0, months(9), months(3)}, st.Row{"b", 4.0, 4.0, months(4), months(4)}),
	)
}

// months is a year-month interval value as a result row holds it.
func months(n int32) arrow.MonthInterval { return arrow.MonthInterval(n) }

// collect_list and collect_set keep a list per group as state, in Update
// mode across restarts: each epoch re-emits the touched groups' lists over
// everything seen (collect_list in arrival order, collect_set without
// repeats; sorted here, as Spark's set order is its hash table's).
func TestStreamingCollectListSetUpdateAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, collect_list(v) AS l, sort_array(collect_set(v)) AS s, count(*) AS n FROM STREAM input GROUP BY k")
	l := func(vs ...any) []any { return vs }
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 2, 0}, st.Row{"a", 1, 0}, st.Row{"a", 2, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"a", l(2, 1, 2), l(1, 2), 3}, st.Row{"b", l(), l(), 1}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 3, 0}, st.Row{"b", 5, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", l(2, 1, 2, 1, 3), l(1, 2, 3), 5}, st.Row{"b", l(5), l(5), 2}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"b", 5, 0}, st.Row{"c", 7, 0}),
		st.CheckLastBatch(st.Row{"b", l(5, 5), l(5), 3}, st.Row{"c", l(7), l(7), 1}),
	)
}
