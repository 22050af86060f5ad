package arrowstream_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// collect_set, mode and histogram_numeric keep lists as partial state,
// which the state store cannot encode yet: a streaming aggregation with
// them is refused when it starts, naming the list type, as collect_list's.
func TestStreamingListAggregatesRefused(t *testing.T) {
	for _, q := range []string{
		"SELECT k, collect_set(v) AS l FROM STREAM input GROUP BY k",
		"SELECT k, mode(v) AS l FROM STREAM input GROUP BY k",
		"SELECT k, histogram_numeric(v, 3) AS l FROM STREAM input GROUP BY k",
	} {
		t.Run(q, func(t *testing.T) {
			s, _ := distinctFixture(t, arrowstream.Update, q)
			st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, "cannot be a grouping or join key"))
		})
	}
}
