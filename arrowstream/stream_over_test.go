package arrowstream_test

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

const overQuery = `
	SELECT k, v, ts,
	  avg(v) OVER w AS a, count(v) OVER w AS c, sum(v) OVER w AS s, min(v) OVER w AS lo, max(v) OVER w AS hi
	FROM STREAM input WATERMARK ts DELAY OF INTERVAL 5 SECONDS
	WINDOW w AS (PARTITION BY k ORDER BY ts, v ROWS BETWEEN %d PRECEDING AND CURRENT ROW)`

// Each row is emitted once the watermark passes it, with its aggregates
// over its partition's two preceding rows and itself; rows out of order
// within the delay are placed by time; a late row is dropped; across a
// restart.
func TestStreamingOverRowsFrame(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Append, fmt.Sprintf(overQuery, 2))
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 2, sec(2)}, st.Row{"a", 1, sec(1)}, st.Row{"b", 10, sec(3)}),
		st.CheckNewAnswer(),
		st.AddData(in, st.Row{"a", 3, sec(10)}),
		st.CheckNewAnswer(
			st.Row{"a", 1, sec(1), 1.0, 1, 1, 1, 1},
			st.Row{"a", 2, sec(2), 1.5, 2, 3, 1, 2},
			st.Row{"b", 10, sec(3), 10.0, 1, 10, 10, 10}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 4, sec(12)}, st.Row{"a", 5, sec(20)}, st.Row{"a", nil, sec(11)}),
		st.CheckNewAnswer(
			st.Row{"a", 3, sec(10), 2.0, 3, 6, 1, 3},
			st.Row{"a", nil, sec(11), 2.5, 2, 5, 2, 3},
			st.Row{"a", 4, sec(12), 3.5, 2, 7, 3, 4}),
		// Late (the watermark is 15 s): dropped.
		st.AddData(in, st.Row{"a", 100, sec(4)}),
		st.CheckNewAnswer(),
		st.AssertLastProgressState("numRowsDroppedByWatermark", 1).ForAllOperators(1),
		st.AddData(in, st.Row{"c", 1, sec(40)}),
		st.CheckNewAnswer(st.Row{"a", 5, sec(20), 4.5, 2, 9, 4, 5}),
		// State: a's and b's history, c's waiting row.
		st.AssertLastProgressState("numRowsTotal", 3).ForAllOperators(3),
	)
}

// Frames that need future rows or unbounded state, other window
// functions, and other modes are refused with the reason.
func TestStreamingOverRefusals(t *testing.T) {
	const from = " FROM STREAM input WATERMARK ts DELAY OF INTERVAL 5 SECONDS"
	for _, c := range []struct {
		mode      arrowstream.OutputMode
		sql, want string
	}{
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)" + from, "needs rows that have not arrived"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)" + from, "would keep every row of a partition"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts)" + from, "would keep every row of a partition"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL 1 SECOND PRECEDING AND CURRENT ROW)" + from, "needs a ROWS frame"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)" + from, "first ORDER BY key to be a watermarked timestamp column"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM STREAM input", "carries no watermark"},
		{arrowstream.Append, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)" + from, "ascending"},
		{arrowstream.Update, "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)" + from, "needs Append mode"},
		{arrowstream.Append, "SELECT k, lag(v) OVER (PARTITION BY k ORDER BY ts)" + from, "Non-time-based windows are not supported"},
	} {
		s, _ := distinctFixture(t, c.mode, c.sql)
		st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, c.want))
	}
}

// TestStreamingOverProperty runs random epochs of rows out of order
// within the watermark delay (none late), under a random frame, with
// restarts and crashes at random epochs, and checks after each epoch that
// the output is, for every row the watermark passed, its aggregates over
// the preceding rows of its partition in (ts, v) order: a brute-force
// model of the frame.
func TestStreamingOverProperty(t *testing.T) {
	type row struct {
		k     string
		v     int64
		null  bool
		ts    int64
		order int
	}
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			n := rng.Intn(4)
			s, in := distinctFixture(t, arrowstream.Append, fmt.Sprintf(overQuery, n))
			var all []row
			maxTs := int64(0)
			expect := func(wm int64) []st.Row {
				byKey := map[string][]row{}
				for _, r := range all {
					byKey[r.k] = append(byKey[r.k], r)
				}
				var out []st.Row
				for _, rows := range byKey {
					sort.SliceStable(rows, func(i, j int) bool {
						a, b := rows[i], rows[j]
						if a.ts != b.ts {
							return a.ts < b.ts
						}
						if a.null != b.null {
							return a.null // NULLS FIRST ascending
						}
						return a.v < b.v
					})
					for i, r := range rows {
						if r.ts > wm {
							continue
						}
						var cnt, sum, lo, hi int64
						for _, f := range rows[max(0, i-n) : i+1] {
							if f.null {
								continue
							}
							if cnt == 0 || f.v < lo {
								lo = f.v
							}
							if cnt == 0 || f.v > hi {
								hi = f.v
							}
							cnt++
							sum += f.v
						}
						var v any = r.v
						if r.null {
							v = nil
						}
						if cnt == 0 {
							out = append(out, st.Row{r.k, v, sec(r.ts), nil, 0, nil, nil, nil})
						} else {
							out = append(out, st.Row{r.k, v, sec(r.ts), float64(sum) / float64(cnt), cnt, sum, lo, hi})
						}
					}
				}
				return out
			}
			actions := []st.Action{st.StartStream(arrowstream.ProcessingTime(0), false)}
			for epoch := 0; epoch < 10; epoch++ {
				var rows []st.Row
				lo := maxTs - 4 // above any watermark (max − 5 s): never late
				for i := rng.Intn(6) + 1; i > 0; i-- {
					r := row{k: string(rune('a' + rng.Intn(2))), v: int64(rng.Intn(5)), null: rng.Intn(6) == 0, ts: max(1, lo+int64(rng.Intn(10))), order: len(all)}
					all = append(all, r)
					var v any = r.v
					if r.null {
						v = nil
					}
					rows = append(rows, st.Row{r.k, v, sec(r.ts)})
				}
				for _, r := range all {
					maxTs = max(maxTs, r.ts)
				}
				if rng.Intn(4) == 0 {
					actions = append(actions, st.FailNextEpoch(), st.AddData(in, rows...),
						st.ExpectFailure(st.RuntimePhase, ""), st.StartStream(arrowstream.ProcessingTime(0), false))
				} else {
					actions = append(actions, st.AddData(in, rows...))
				}
				actions = append(actions, st.CheckAnswer(expect(maxTs-5)...))
				if rng.Intn(3) == 0 {
					actions = append(actions, st.StopStream(), st.StartStream(arrowstream.ProcessingTime(0), false))
				}
			}
			st.Run(t, s, actions...)
		})
	}
}
