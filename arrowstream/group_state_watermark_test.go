package arrowstream_test

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// TestGroupStateWatermarkPresent: whether GetCurrentWatermarkMs has a
// watermark to return is decided by the operator's input, not by the
// query (Spark's FlatMapGroupsWithStateExec.watermarkPresent, a column of
// the child's output that carries the watermark). A query that defines a
// watermark still gives the function none when a projection drops the
// event-time column, or behind another flatMapGroupsWithState, whose rows
// carry no event time (there the operator's input watermark is 0, which
// the getter used to return as if it were the watermark).
func TestGroupStateWatermarkPresent(t *testing.T) {
	// wm emits (key, 0, the watermark) or fails with the getter's error.
	wm := func(key arrow.Array, _ arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		w, err := s.GetCurrentWatermarkMs()
		if err != nil {
			return nil, err
		}
		return gsRow(key.ValueStr(0), 0, w), nil
	}
	count := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		n := gsInt(s) + rows.NumRows()
		if err := gsSet(s, n); err != nil {
			return nil, err
		}
		return gsRow(key.ValueStr(0), n, 0), nil
	}
	watermarked := func(sess *arrowstream.Session) *arrowstream.DataFrame {
		return sess.ReadStream("input").Select("k", "timestamp_seconds(t) AS et").WithWatermark("et", "10 seconds")
	}
	const noWatermark = "no watermarked column reaches this operator's input"
	for _, c := range []struct {
		name    string
		mode    arrowstream.OutputMode
		query   func(*arrowstream.Session) *arrowstream.DataFrame
		actions func(in *st.Source) []st.Action
	}{
		{"event time column kept through a dedup", arrowstream.Update, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return watermarked(sess).DropDuplicates("k", "et").GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.NoTimeout, wm)
		}, func(in *st.Source) []st.Action {
			return []st.Action{
				st.AddData(in, st.Row{"a", 15}), st.CheckNewAnswer(st.Row{"a", 0, 0}),
				st.AddData(in, st.Row{"b", 20}), st.CheckNewAnswer(st.Row{"b", 0, 5000}),
			}
		}},
		{"event time column dropped", arrowstream.Update, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return watermarked(sess).Select("k").GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.NoTimeout, wm)
		}, func(in *st.Source) []st.Action {
			return []st.Action{st.AddData(in, st.Row{"a", 15}), st.ExpectFailure(st.RuntimePhase, noWatermark)}
		}},
		{"behind another flatMapGroupsWithState", arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			first := watermarked(sess).GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Append, arrowstream.NoTimeout, count)
			return first.GroupByKey("k").FlatMapGroupsWithState(gsOut, arrowstream.Append, arrowstream.NoTimeout, wm)
		}, func(in *st.Source) []st.Action {
			return []st.Action{st.AddData(in, st.Row{"a", 15}), st.ExpectFailure(st.RuntimePhase, noWatermark)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := poisonmem.New()
			// Registered before the stream's own cleanup, so it runs after
			// it: the failed epoch's input stays in the source until then.
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			s := st.NewT(t, st.Options{Allocator: mem, OutputMode: c.mode, Query: c.query, StepTimeout: 10 * time.Second})
			in := s.MustAddSource("input", st.Schema(t, "k", vector.String, "t", vector.Int64))
			st.Run(t, s, append([]st.Action{st.StartStream(arrowstream.ProcessingTime(0), false)}, c.actions(in)...)...)
		})
	}
}
