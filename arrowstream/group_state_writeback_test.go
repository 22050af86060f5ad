package arrowstream_test

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// TestGroupStateWriteBackKeepsTimeoutOnlyKey: only an explicit Remove
// without a timeout deletes a key (Spark's onIteratorCompletion). A key
// that holds only a timeout (the function set one without a state) and
// whose timed-out call sets nothing is written back with neither, so it
// stays in the store and counts in numRowsTotal as one updated row; the
// same key removed explicitly is deleted. The engine used to delete every
// key left without state and timeout.
func TestGroupStateWriteBackKeepsTimeoutOnlyKey(t *testing.T) {
	// Rows: "t" sets a 5 s timeout and no state; a timed-out call removes
	// the state only for keys starting with "r".
	fn := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		k := key.ValueStr(0)
		if s.HasTimedOut() {
			if k[0] == 'r' {
				s.Remove()
			}
			return gsRow(k, -1, s.GetCurrentProcessingTimeMs()), nil
		}
		if err := s.SetTimeoutDuration(5 * time.Second); err != nil {
			return nil, err
		}
		return gsRow(k, 0, s.GetCurrentProcessingTimeMs()), nil
	}
	s, in := gsFixture(t, func(sess *arrowstream.Session) *arrowstream.DataFrame {
		return sess.ReadStream("input").GroupByKey("value").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.ProcessingTimeTimeout, fn)
	}, "value", vector.String)
	start := st.StartStream(arrowstream.ProcessingTime(time.Second), true)
	st.Run(t, s, start,
		st.AddData(in, st.Row{"k"}, st.Row{"r"}), st.AdvanceClock(time.Second),
		st.CheckNewAnswer(st.Row{"k", 0, 1000}, st.Row{"r", 0, 1000}), st.AssertStateRows([]int64{2}, []int64{2}, nil),
		// Both time out at 7000 (6000 is not strictly below 6000): k is
		// kept without state or timeout, r is deleted.
		st.AdvanceClock(6*time.Second), st.CheckNewAnswer(st.Row{"k", -1, 7000}, st.Row{"r", -1, 7000}),
		st.AssertStateRows([]int64{1}, []int64{1}, nil),
		// Nothing is due any more; k stays, also across a restart, where
		// new rows of k set a timeout on the same entry.
		st.AdvanceClock(10*time.Second), st.CheckNewAnswer(), st.AssertStateRows([]int64{1}, []int64{0}, nil),
		st.StopStream(), start,
		st.AddData(in, st.Row{"k"}), st.AdvanceClock(time.Second),
		st.CheckNewAnswer(st.Row{"k", 0, 18000}), st.AssertStateRows([]int64{1}, []int64{1}, nil),
	)
}
