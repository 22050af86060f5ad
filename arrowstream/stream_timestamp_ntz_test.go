package arrowstream_test

import (
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// A streaming query under spark.sql.timestampType=TIMESTAMP_NTZ: CAST(ts
// AS TIMESTAMP) of an instant column is its wall clock in the session time
// zone (America/Los_Angeles, UTC-8 in January), a TIMESTAMP_NTZ column
// that reaches the sink as a zone-less Arrow timestamp (shown as that wall
// clock read as UTC); an interval moves the wall clock.
func TestStreamingTimestampNTZSession(t *testing.T) {
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	const q = "SELECT k, CAST(ts AS TIMESTAMP) AS wall, typeof(CAST(ts AS TIMESTAMP)) AS t, " +
		"CAST(CAST(ts AS TIMESTAMP) + INTERVAL '1' HOUR AS STRING) AS later FROM STREAM input"
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: arrowstream.Append, StepTimeout: 30 * time.Second,
		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame { return sess.SQLDataFrame(q) },
		Conf: map[string]string{
			"spark.sql.timestampType":    "TIMESTAMP_NTZ",
			"spark.sql.session.timeZone": "America/Los_Angeles",
		},
	})
	in := s.MustAddSource("input", st.Schema(t, "k", vector.String, "ts", vector.Timestamp))
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", time.Date(2022, 1, 1, 18, 0, 0, 0, time.UTC)}),
		st.CheckLastBatch(st.Row{"a", time.Date(2022, 1, 1, 10, 0, 0, 0, time.UTC), "timestamp_ntz", "2022-01-01 11:00:00"}),
	)
}
