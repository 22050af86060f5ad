package arrowstream_test

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// The EXTRACT fields and day-time interval operators run in streaming
// projections with the same kernels as in batch: SECOND with its fraction,
// YEAROFWEEK, a day-time interval's HOUR, an interval times a number and a
// timestamp minus an interval column.
func TestStreamingExtractAndDayTimeIntervals(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Append,
		"SELECT k, CAST(EXTRACT(SECOND FROM ts) AS STRING) AS sec, EXTRACT(YEAROFWEEK FROM ts) AS yow, "+
			"EXTRACT(HOUR FROM make_dt_interval(0, CAST(v AS INT), 0, 0)) AS h, CAST(make_dt_interval(0, CAST(v AS INT), 0, 0) * 2 AS STRING) AS twice, "+
			"CAST(ts - make_dt_interval(0, CAST(v AS INT), 0, 0) AS STRING) AS earlier FROM STREAM input")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 1_500_000}),
		st.CheckLastBatch(st.Row{"a", "1.500000", 1970, 1, "INTERVAL '0 02:00:00' DAY TO SECOND", "1969-12-31 23:00:01.5"}),
		st.AddData(in, st.Row{"b", 3, 86_400_000_000*4 + 59_000_001}),
		st.CheckLastBatch(st.Row{"b", "59.000001", 1970, 3, "INTERVAL '0 06:00:00' DAY TO SECOND", "1970-01-04 21:00:59.000001"}),
	)
}
