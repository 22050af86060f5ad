package arrowstream_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// The statistical aggregates keep mergeable partial state (n, mean and
// central moments, or co-moments) in a streaming aggregation: each epoch's
// partial state is merged into the state store's, across restarts. The
// values are chosen so that every mean and moment is exact in doubles:
// a = 1, 3 then 5, 7 (mean 4, squared deviations 20); b = 5 then 7.
func TestStreamingStatisticalAggregatesAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, var_pop(v) AS vp, var_samp(v) AS vs, stddev_pop(v) AS sp, covar_pop(v, 2 * v) AS cp, corr(v, v) AS r, regr_slope(2 * v, v) AS slope FROM STREAM input GROUP BY k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 3, 0}, st.Row{"b", 5, 0}),
		st.CheckLastBatch(st.Row{"a", 1.0, 2.0, 1.0, 2.0, 1.0, 2.0}, st.Row{"b", 0.0, nil, 0.0, 0.0, nil, nil}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 5, 0}, st.Row{"a", 7, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 5.0, 20.0 / 3, 2.23606797749979, 10.0, 1.0, 2.0}),
		st.AddData(in, st.Row{"b", 7, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"b", 1.0, 2.0, 1.0, 2.0, 1.0, 2.0}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"c", nil, 0}),
		st.CheckLastBatch(st.Row{"c", nil, nil, nil, nil, nil, nil}),
	)
}

// bit_and, bit_or and bit_xor keep the value so far as partial state.
func TestStreamingBitwiseAggregatesAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, bit_and(v) AS a, bit_or(v) AS o, bit_xor(v) AS x FROM STREAM input GROUP BY k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 12, 0}, st.Row{"a", nil, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"a", 12, 12, 12}, st.Row{"b", nil, nil, nil}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 10, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 8, 14, 6}),
		st.AddData(in, st.Row{"a", 7, 0}, st.Row{"b", 3, 0}),
		st.CheckLastBatch(st.Row{"a", 0, 15, 1}, st.Row{"b", 3, 3, 3}),
	)
}
