package arrowstream_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// Aggregates whose partial state is a list (collect_list, collect_set,
// the exact percentiles, percentile_approx's sketch) keep it per group in
// a streaming aggregation, across restarts: the Complete-mode answer
// equals the batch answer.
func TestStreamingListStateAggregates(t *testing.T) {
	epochs := [][2][]st.Row{
		{{fin("a", 1.0, 1), fin("a", 2.0, 2), fin("b", 3.0, 3), fin("a", 2.0, 3), fin("a", negZero, 4)}, nil},
		{{fin("a", 5.0, 1), fin("b", 2.0, 2), fin("c", nil, 3), fin("b", nanPayload, 3)}, nil},
		{{fin("a", 5.0, 1), fin("b", -1.0, 2), fin("d", 0.0, 3)}, nil},
	}
	for _, agg := range []string{
		"collect_list(x)", "sort_array(collect_set(x))", "collect_list(k)",
		"percentile(x, 0.5)", "percentile(x, array(0.25, 0.75))", "median(x)",
		"percentile_cont(0.5) WITHIN GROUP (ORDER BY x)", "percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC)",
		"percentile_approx(x, 0.5)",
	} {
		t.Run(agg, func(t *testing.T) {
			eps := epochs
			if agg == "percentile_approx(x, 0.5)" {
				// Spark's summaries merge with Scala's < on doubles, for
				// which a NaN is never less: a NaN's rank depends on how
				// the input was split into partial summaries (in Spark
				// too), so the batch answer is no oracle with NaNs.
				eps = withoutNaN(epochs)
			}
			runFloatStateCase(t, floatStateCase{
				mode:   arrowstream.Complete,
				stream: fmt.Sprintf("SELECT k, %s AS r, count(*) AS n FROM STREAM input GROUP BY k", agg),
				batch:  fmt.Sprintf("SELECT k, %s AS r, count(*) AS n FROM input_t GROUP BY k", agg),
				epochs: eps,
			})
		})
	}
}

// Aggregates whose state is not kept between epochs are refused when the
// query starts, naming the aggregate.
func TestStreamingAggregatesWithoutLiveStateRefused(t *testing.T) {
	for _, agg := range []string{"mode(v)", "histogram_numeric(v, 3)"} {
		t.Run(agg, func(t *testing.T) {
			s, _ := distinctFixture(t, arrowstream.Update, "SELECT k, "+agg+" AS r FROM STREAM input GROUP BY k")
			st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, "is not supported in a streaming aggregation"))
		})
	}
}

// withoutNaN returns epochs with every NaN x replaced by 7.
func withoutNaN(epochs [][2][]st.Row) [][2][]st.Row {
	out := make([][2][]st.Row, len(epochs))
	for e, ep := range epochs {
		for side, rows := range ep {
			for _, r := range rows {
				r = append(st.Row(nil), r...)
				if x, ok := r[1].(float64); ok && math.IsNaN(x) {
					r[1] = 7.0
				}
				out[e][side] = append(out[e][side], r)
			}
		}
	}
	return out
}
