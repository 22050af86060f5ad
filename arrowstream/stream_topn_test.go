package arrowstream_test

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
)

// Update mode: each epoch upserts the (k, rn) ranks whose row changed,
// across restarts; ties keep the earlier row first.
func TestStreamingTopNUpdate(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, v, rn FROM (SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM STREAM input) WHERE rn <= 2")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 5, 0}, st.Row{"a", 3, 0}, st.Row{"a", 1, 0}, st.Row{"b", 7, 0}),
		st.CheckLastBatch(st.Row{"a", 5, 1}, st.Row{"a", 3, 2}, st.Row{"b", 7, 1}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 4, 0}, st.Row{"b", 1, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 4, 2}, st.Row{"b", 1, 2}),
		// Below the top 2 of a: nothing changes there.
		st.AddData(in, st.Row{"a", 2, 0}, st.Row{"b", 9, 0}),
		st.CheckLastBatch(st.Row{"b", 9, 1}, st.Row{"b", 7, 2}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 6, 0}),
		st.CheckLastBatch(st.Row{"a", 6, 1}, st.Row{"a", 5, 2}),
	)
}

// The QUALIFY form with rn = 1: the latest row per key (Nexmark q18's
// dedup), carrying the other columns.
func TestStreamingTopNQualifyFirst(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, v, ts FROM STREAM input QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, sec(1)}, st.Row{"a", 2, sec(3)}, st.Row{"b", 3, sec(2)}),
		st.CheckLastBatch(st.Row{"a", 2, sec(3)}, st.Row{"b", 3, sec(2)}),
		st.AddData(in, st.Row{"a", 9, sec(2)}, st.Row{"b", 4, sec(5)}),
		st.CheckLastBatch(st.Row{"b", 4, sec(5)}),
	)
}

// Append mode: per-window top-N over a windowed aggregation in Append
// mode (Nexmark q5/q19 style): each window's ranking is emitted once,
// when the watermark passes it, then evicted.
func TestStreamingTopNPerWindowAppend(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Append, `
		SELECT we, k, n, rn FROM (
		  SELECT we, k, n, row_number() OVER (PARTITION BY we ORDER BY n DESC, k) AS rn
		  FROM (SELECT window.end AS we, k, count(*) AS n FROM STREAM input WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '10 seconds'), k))
		WHERE rn <= 2`)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, sec(1)}, st.Row{"b", 1, sec(2)}, st.Row{"b", 1, sec(3)}, st.Row{"c", 1, sec(4)}, st.Row{"c", 1, sec(5)}, st.Row{"c", 1, sec(6)}),
		st.CheckNewAnswer(),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, sec(15)}),
		st.CheckNewAnswer(),
		st.AddData(in, st.Row{"a", 1, sec(31)}),
		st.CheckNewAnswer(st.Row{10, "c", 3, 1}, st.Row{10, "b", 2, 2}, st.Row{20, "a", 1, 1}),
		st.AssertLastProgressState("numRowsTotal", 0).ForAllOperators(0, 1),
	)
}

// TestStreamingTopNProperty runs random epochs (restarts between some) of
// an Update-mode top-3 and checks each epoch's upserts against a model:
// per key, every row seen, ranked by v DESC, ts; the output is the ranks
// whose row differs from the previous epoch's ranking.
func TestStreamingTopNProperty(t *testing.T) {
	type row struct {
		v  int64
		ts int64
	}
	rank := func(rows []row) []row {
		out := append([]row(nil), rows...)
		sort.Slice(out, func(i, j int) bool {
			if out[i].v != out[j].v {
				return out[i].v > out[j].v
			}
			return out[i].ts < out[j].ts
		})
		if len(out) > 3 {
			out = out[:3]
		}
		return out
	}
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s, in := distinctFixture(t, arrowstream.Update,
				"SELECT k, v, ts, row_number() OVER (PARTITION BY k ORDER BY v DESC, ts) AS rn FROM STREAM input QUALIFY rn <= 3")
			seen := map[string][]row{}
			actions := []st.Action{st.StartStream(arrowstream.ProcessingTime(0), false)}
			next := int64(1)
			for epoch := 0; epoch < 8; epoch++ {
				var rows []st.Row
				before := map[string][]row{}
				for i := rng.Intn(10) + 1; i > 0; i-- {
					k := string(rune('a' + rng.Intn(3)))
					if _, ok := before[k]; !ok {
						before[k] = rank(seen[k])
					}
					r := row{int64(rng.Intn(8)), next}
					next++
					seen[k] = append(seen[k], r)
					rows = append(rows, st.Row{k, r.v, sec(r.ts)})
				}
				var want []st.Row
				for k, old := range before {
					for i, r := range rank(seen[k]) {
						if i >= len(old) || old[i] != r {
							want = append(want, st.Row{k, r.v, sec(r.ts), i + 1})
						}
					}
				}
				actions = append(actions, st.AddData(in, rows...), st.CheckLastBatch(want...))
				if rng.Intn(3) == 0 {
					actions = append(actions, st.StopStream(), st.StartStream(arrowstream.ProcessingTime(0), false))
				}
			}
			st.Run(t, s, actions...)
		})
	}
}
