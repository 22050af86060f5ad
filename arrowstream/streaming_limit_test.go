package arrowstream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// The tests of this file transcribe Spark's streaming limit tests
// (StreamSuite: "streaming limit ...", SPARK-30657, SPARK-30658). Each runs
// with both state store providers, and again with a stop and start of the
// query before every epoch that adds data: the count of rows a limit let
// through lives in the state store, so a restart must not reset it.

// limitCase runs body for both providers and with and without restarts.
func limitCase(t *testing.T, body func(t *testing.T, conf map[string]string, restart bool)) {
	for _, provider := range []string{"memory", "pebble"} {
		for _, restart := range []bool{false, true} {
			name := provider
			if restart {
				name += "/restart"
			}
			t.Run(name, func(t *testing.T) {
				body(t, map[string]string{arrowstream.ConfStateStoreProvider: provider}, restart)
			})
		}
	}
}

// limitFixture is a stream over "input" (columns as st.Schema pairs) with
// Spark's test default of 5 shuffle partitions unless conf says otherwise.
func limitFixture(t *testing.T, conf map[string]string, mode arrowstream.OutputMode, query func(*arrowstream.Session) *arrowstream.DataFrame, fields ...any) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	c := map[string]string{arrowstream.ConfShufflePartitions: "5"}
	for k, v := range conf {
		c[k] = v
	}
	s := st.NewT(t, st.Options{Allocator: mem, OutputMode: mode, Query: query, StepTimeout: 20 * time.Second, Conf: c})
	if len(fields) == 0 {
		fields = []any{"value", vector.Int32}
	}
	return s, s.MustAddSource("input", st.Schema(t, fields...))
}

func intRows(from, to int) []st.Row {
	var rows []st.Row
	for i := from; i <= to; i++ {
		rows = append(rows, st.Row{i})
	}
	return rows
}

// sec is a timestamp n seconds after the Unix epoch.
func sec(n int64) time.Time { return time.Unix(n, 0).UTC() }

var startNow = st.StartStream(arrowstream.ProcessingTime(0), false)

// StreamSuite: "streaming limit without state".
func TestStreamingLimitWithoutState(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, _ bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(0)
		})
		st.Run(t, s, startNow, st.AddData(in, intRows(1, 8)...), st.CheckAnswer())
		s2, in2 := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(4)
		})
		st.Run(t, s2, startNow, st.AddData(in2, intRows(1, 8)...), st.CheckAnswer(intRows(1, 4)...))
	})
}

// StreamSuite: "streaming limit with state".
func TestStreamingLimitWithState(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(4)
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, intRows(1, 2)...), st.CheckAnswer(intRows(1, 2)...)},
			[]st.Action{st.AddData(in, intRows(3, 6)...), st.CheckAnswer(intRows(1, 4)...)},
			[]st.Action{st.AddData(in, intRows(7, 9)...), st.CheckAnswer(intRows(1, 4)...)},
		)...)
	})
}

// StreamSuite: "streaming limit with other operators".
func TestStreamingLimitWithOtherOperators(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Where("value % 2 = 1").Limit(4)
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, intRows(1, 5)...), st.CheckAnswer(st.Row{1}, st.Row{3}, st.Row{5})},
			[]st.Action{st.AddData(in, intRows(6, 9)...), st.CheckAnswer(st.Row{1}, st.Row{3}, st.Row{5}, st.Row{7})},
			[]st.Action{st.AddData(in, intRows(10, 12)...), st.CheckAnswer(st.Row{1}, st.Row{3}, st.Row{5}, st.Row{7})},
		)...)
	})
}

// StreamSuite: "streaming limit with multiple limits".
func TestStreamingLimitMultipleLimits(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(4).Limit(2)
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, st.Row{1}), st.CheckAnswer(st.Row{1})},
			[]st.Action{st.AddData(in, intRows(2, 8)...), st.CheckAnswer(st.Row{1}, st.Row{2})},
		)...)
		s2, in2 := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(4).Limit(100).Limit(3)
		})
		st.Run(t, s2, epochs(restart, startNow,
			[]st.Action{st.AddData(in2, st.Row{1}, st.Row{2}), st.CheckAnswer(st.Row{1}, st.Row{2})},
			[]st.Action{st.AddData(in2, intRows(3, 8)...), st.CheckAnswer(intRows(1, 3)...)},
		)...)
	})
}

// StreamSuite: "SPARK-30658: streaming limit before agg in complete mode":
// the limit below the aggregation counts rows over the whole stream, not
// per epoch.
func TestStreamingLimitBeforeAggComplete(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Complete, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(5).GroupBy("value").Count()
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, intRows(1, 3)...), st.CheckAnswer(st.Row{1, 1}, st.Row{2, 1}, st.Row{3, 1})},
			[]st.Action{st.AddData(in, intRows(1, 9)...), st.CheckAnswer(st.Row{1, 2}, st.Row{2, 2}, st.Row{3, 1})},
			[]st.Action{st.AddData(in, intRows(1, 9)...), st.CheckAnswer(st.Row{1, 2}, st.Row{2, 2}, st.Row{3, 1})},
		)...)
	})
}

// StreamSuite: "SPARK-30658: streaming limits before and after agg in
// complete mode" (both orders of the two limits): the lower limit is
// stateful, the upper one a plain limit of each complete result.
func TestStreamingLimitsBeforeAndAfterAggComplete(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		conf[arrowstream.ConfShufflePartitions] = "1"
		s, in := limitFixture(t, conf, arrowstream.Complete, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(4).GroupBy("value").Count().OrderBy("value").Limit(3)
		})
		three := []st.Row{{1, 1}, {2, 1}, {3, 1}}
		st.Run(t, s, epochs(restart, startNow,
			// Only 1 to 4 aggregate; counts of 1 to 3 are output.
			[]st.Action{st.AddData(in, intRows(1, 9)...), st.CheckAnswer(three...)},
			// None of the new values aggregate.
			[]st.Action{st.AddData(in, intRows(2, 6)...), st.CheckAnswer(three...)},
		)...)
		s2, in2 := limitFixture(t, conf, arrowstream.Complete, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(2).GroupBy("value").Count().OrderBy("value").Limit(3)
		})
		st.Run(t, s2, epochs(restart, startNow,
			[]st.Action{st.AddData(in2, intRows(1, 9)...), st.CheckAnswer(st.Row{1, 1}, st.Row{2, 1})},
			[]st.Action{st.AddData(in2, intRows(2, 6)...), st.CheckAnswer(st.Row{1, 1}, st.Row{2, 1})},
		)...)
	})
}

// A limit above the aggregation in Complete mode limits each complete
// result (Spark plans a plain limit there): a group that sorts first later
// shows up in the answer.
func TestStreamingLimitAfterAggComplete(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Complete, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupBy("value").Count().OrderBy("value").Limit(2)
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, intRows(3, 6)...), st.CheckAnswer(st.Row{3, 1}, st.Row{4, 1})},
			[]st.Action{st.AddData(in, st.Row{1}, st.Row{3}), st.CheckAnswer(st.Row{1, 1}, st.Row{3, 2})},
		)...)
	})
}

// StreamSuite: "SPARK-30657: streaming limit after streaming dedup in
// append mode". Rows reach the limit in the order of the deduplication's
// state partitions, which is Spark's pmod(murmur3(key, 42), 5).
func TestStreamingLimitAfterDedupAppend(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").DropDuplicates().Limit(1)
		})
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, st.Row{1}, st.Row{2}), st.CheckAnswer(st.Row{1})},
			[]st.Action{st.AddData(in, st.Row{3}, st.Row{4}), st.CheckAnswer(st.Row{1})},
		)...)
		// pmod(hash(2), 5) = 4 and pmod(hash(3), 5) = 1: 3 reaches the
		// limit first although it comes second.
		s2, in2 := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").DropDuplicates().Limit(1)
		})
		st.Run(t, s2, epochs(restart, startNow,
			[]st.Action{st.AddData(in2, st.Row{2}, st.Row{3}), st.CheckAnswer(st.Row{3})},
			[]st.Action{st.AddData(in2, st.Row{1}), st.CheckAnswer(st.Row{3})},
			[]st.Action{st.AssertOnQuery("Spark's partitioning recorded", func(s *st.Stream) error {
				offsets, err := checkpoint.OpenOffsetLog(s.CheckpointDir(), &checkpoint.Writer{NoSync: true})
				if err != nil {
					return err
				}
				data, _, err := offsets.EntryBody(0)
				if err != nil {
					return err
				}
				if want := `"` + arrowstream.ConfStatePartitioning + `":"murmur3"`; !strings.Contains(string(data), want) {
					return fmt.Errorf("offset log entry 0 lacks %s: %s", want, data)
				}
				return nil
			})},
		)...)
	})
}

// A limit below a watermarked aggregation and one above it, in Append
// mode: both count across epochs.
func TestStreamingLimitAroundAggAppend(t *testing.T) {
	windowed := func(df *arrowstream.DataFrame) *arrowstream.DataFrame {
		return df.WithWatermark("ts", "0 seconds").GroupBy("window(ts, '10 seconds') AS w").Agg("count(*) AS n").Select("w.start", "n")
	}
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return windowed(sess.ReadStream("input")).Limit(1)
		}, "ts", vector.Timestamp)
		st.Run(t, s, epochs(restart, startNow,
			// The watermark moves to 12: window 0 closes and passes.
			[]st.Action{st.AddData(in, st.Row{sec(1)}, st.Row{sec(12)}), st.CheckAnswer(st.Row{0, 1})},
			// Then to 35: window 10 closes, but the limit is reached.
			[]st.Action{st.AddData(in, st.Row{sec(35)}), st.CheckAnswer(st.Row{0, 1})},
			[]st.Action{st.AddData(in, st.Row{sec(60)}), st.CheckAnswer(st.Row{0, 1})},
		)...)
		s2, in2 := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return windowed(sess.ReadStream("input").Limit(3))
		}, "ts", vector.Timestamp)
		st.Run(t, s2, epochs(restart, startNow,
			[]st.Action{st.AddData(in2, st.Row{sec(1)}, st.Row{sec(2)}), st.CheckAnswer()},
			// Only 25 of these passes the limit (3 rows in all): the
			// watermark moves to 25 and window 0 closes with 2 rows.
			[]st.Action{st.AddData(in2, st.Row{sec(25)}, st.Row{sec(3)}, st.Row{sec(4)}), st.CheckAnswer(st.Row{0, 2})},
			// 50 does not pass the limit: the watermark stays at 25 and
			// window 20 stays open.
			[]st.Action{st.AddData(in2, st.Row{sec(50)}), st.CheckAnswer(st.Row{0, 2})},
		)...)
	})
}

// StreamSuite: "streaming limit in update mode": refused with Spark's
// message.
func TestStreamingLimitUpdateModeRefused(t *testing.T) {
	for _, q := range []func(*arrowstream.Session) *arrowstream.DataFrame{
		func(sess *arrowstream.Session) *arrowstream.DataFrame { return sess.ReadStream("input").Limit(5) },
		func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupBy("value").Count().Limit(5)
		},
		func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").Limit(5).GroupBy("value").Count()
		},
	} {
		s, in := limitFixture(t, nil, arrowstream.Update, q)
		st.Run(t, s, st.AddData(in, intRows(1, 3)...),
			st.ExpectFailure(st.AnalysisPhase, "Limits are not supported on streaming DataFrames/Datasets in Update output mode"))
	}
}

// StreamSuite: "SPARK-30657: streaming limit should not apply on limits on
// state subplans": a limit of the static side of a stream-static join is
// a plain batch limit, applied anew every epoch.
func TestStreamingLimitOnStaticSide(t *testing.T) {
	limitCase(t, func(t *testing.T, conf map[string]string, restart bool) {
		s, in := limitFixture(t, conf, arrowstream.Append, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").JoinUsing(sess.Table("static").OrderBy("value").Limit(1), []string{"value"}, "inner")
		})
		if err := s.AddTable("static", st.Schema(t, "value", vector.Int32), st.Row{2}, st.Row{1}); err != nil {
			t.Fatal(err)
		}
		st.Run(t, s, epochs(restart, startNow,
			[]st.Action{st.AddData(in, intRows(1, 3)...), st.CheckAnswer(st.Row{1})},
			[]st.Action{st.AddData(in, st.Row{1}, st.Row{3}, st.Row{5}), st.CheckAnswer(st.Row{1}, st.Row{1})},
		)...)
	})
}
