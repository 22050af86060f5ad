package arrowstream_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// percentile_approx keeps its serialized summary as partial state in a
// streaming aggregation, across restarts: the answers are those of the
// summary of all rows so far (ranks ceil(p n) below the threshold).
func TestStreamingApproxPercentileAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, percentile_approx(v, 0.5) AS p, percentile_approx(v, array(0.0, 1.0), 100) AS mm FROM STREAM input GROUP BY k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 3, 0}, st.Row{"a", 1, 0}, st.Row{"a", 2, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"a", 2, []any{1, 3}}, st.Row{"b", nil, nil}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 11, 0}, st.Row{"a", 10, 0}, st.Row{"b", 4, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 3, []any{1, 11}}, st.Row{"b", 4, []any{4, 4}}),
	)
}
