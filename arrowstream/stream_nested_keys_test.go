package arrowstream_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// Arrays as keys work in batch queries; a streaming aggregation, DISTINCT
// or dedup keeps its keys in state, which does not hold arrays yet (the
// state encoding would fold -0.0 inside a kept array into 0.0): the query
// is refused when it starts, naming the type and the reason.
func TestStreamingArrayKeysRefused(t *testing.T) {
	for _, q := range []string{
		"SELECT array(k) AS a, count(*) AS n FROM STREAM input GROUP BY array(k)",
		"SELECT DISTINCT array(v) AS a FROM STREAM input",
		"SELECT named_struct('l', array(v)) AS s, count(*) AS n FROM STREAM input GROUP BY 1",
	} {
		t.Run(q, func(t *testing.T) {
			s, _ := distinctFixture(t, arrowstream.Update, q)
			st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, "cannot be a grouping or join key in streaming state"))
		})
	}
}
