package arrowstream_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// distinctFixture runs sql over a stream "input" (k string, v bigint,
// ts timestamp) with two shuffle partitions and a checked allocator.
func distinctFixture(t *testing.T, mode arrowstream.OutputMode, sql string) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: mode, StepTimeout: 30 * time.Second,
		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame { return sess.SQLDataFrame(sql) },
		Conf:  map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	in := s.MustAddSource("input", st.Schema(t, "k", vector.String, "v", vector.Int64, "ts", vector.Timestamp))
	return s, in
}

// Update mode: each epoch re-emits the groups it touched with their
// distinct aggregates over everything seen, across a restart.
func TestStreamingDistinctUpdateAcrossRestart(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT k, count(DISTINCT v) AS dc, sum(DISTINCT v) AS ds, avg(DISTINCT v) AS da, count(v) AS n, sum(v) AS s FROM STREAM input GROUP BY k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}, st.Row{"a", 2, 0}, st.Row{"b", 5, 0}, st.Row{"b", nil, 0}),
		st.CheckLastBatch(st.Row{"a", 2, 3, 1.5, 3, 4}, st.Row{"b", 1, 5, 5.0, 1, 5}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 2, 0}, st.Row{"a", 4, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 3, 7, 7.0 / 3, 5, 10}),
		st.AddData(in, st.Row{"b", 5, 0}, st.Row{"c", nil, 0}),
		st.CheckLastBatch(st.Row{"b", 1, 5, 5.0, 2, 10}, st.Row{"c", 0, nil, nil, 0, nil}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"b", 6, 0}),
		st.CheckLastBatch(st.Row{"a", 3, 7, 7.0 / 3, 6, 11}, st.Row{"b", 2, 11, 5.5, 3, 16}),
	)
}

// Complete mode: a global distinct count, and count(DISTINCT a, b) over
// pairs (rows with a NULL in the pair do not count).
func TestStreamingDistinctComplete(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Complete,
		"SELECT count(DISTINCT k) AS keys, count(DISTINCT k, v) AS pairs, min(DISTINCT v) AS lo, count(*) AS n FROM STREAM input")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}, st.Row{"a", nil, 0}, st.Row{"b", 1, 0}),
		st.CheckLastBatch(st.Row{2, 2, 1, 4}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"b", 1, 0}, st.Row{"c", 0, 0}, st.Row{nil, 7, 0}),
		st.CheckLastBatch(st.Row{3, 3, 0, 7}),
	)
}

// Append mode with a watermark: each window is emitted once, when the
// watermark passes it, with its distinct count; its remembered values are
// evicted with it (a value seen again in a later window counts there).
func TestStreamingDistinctWindowedAppend(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Append,
		"SELECT window.start AS w, k, count(DISTINCT v) AS dc, sum(DISTINCT v) AS ds FROM STREAM input WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '10 seconds'), k")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, sec(1)}, st.Row{"a", 1, sec(2)}, st.Row{"a", 2, sec(3)}, st.Row{"b", 3, sec(4)}),
		st.CheckNewAnswer(),
		st.AddData(in, st.Row{"a", 1, sec(12)}, st.Row{"a", 3, sec(15)}),
		st.CheckNewAnswer(),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		// Watermark 25 - 10 = 15: window [0, 10) is final.
		st.AddData(in, st.Row{"a", 2, sec(25)}),
		st.CheckNewAnswer(st.Row{0, "a", 2, 3}, st.Row{0, "b", 1, 3}),
		// Late for [0, 10): dropped; [10, 20) still open.
		st.AddData(in, st.Row{"a", 9, sec(5)}, st.Row{"a", 1, sec(19)}),
		st.CheckNewAnswer(),
		st.AddData(in, st.Row{"a", 1, sec(40)}),
		st.CheckNewAnswer(st.Row{10, "a", 2, 4}, st.Row{20, "a", 1, 2}),
		// Both operators (aggregation, then the distinct values) hold only [40, 50).
		st.AssertLastProgressState("numRowsTotal", 0).ForAllOperators(1, 1),
	)
}

// TestStreamingDistinctProperty runs random epochs (with restarts between
// some) of an Update-mode query with distinct and plain aggregates and
// checks every epoch's output against a brute-force model: per key, the
// multiset of values seen so far.
func TestStreamingDistinctProperty(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s, in := distinctFixture(t, arrowstream.Update,
				"SELECT k, count(DISTINCT v) AS dc, sum(DISTINCT v) AS ds, count(DISTINCT v, k) AS dp, count(v) AS n FROM STREAM input GROUP BY k")
			seen := map[string][]int64{}
			actions := []st.Action{st.StartStream(arrowstream.ProcessingTime(0), false)}
			for epoch := 0; epoch < 8; epoch++ {
				var rows []st.Row
				touched := map[string]bool{}
				for i := rng.Intn(12) + 1; i > 0; i-- {
					k := string(rune('a' + rng.Intn(4)))
					touched[k] = true
					if rng.Intn(6) == 0 {
						rows = append(rows, st.Row{k, nil, 0})
						seen[k] = append(seen[k], -1)
						continue
					}
					v := int64(rng.Intn(6))
					rows = append(rows, st.Row{k, v, 0})
					seen[k] = append(seen[k], v)
				}
				var want []st.Row
				for k := range touched {
					distinct := map[int64]bool{}
					var sum, n int64
					for _, v := range seen[k] {
						if v < 0 {
							continue
						}
						n++
						if !distinct[v] {
							distinct[v] = true
							sum += v
						}
					}
					var ds any
					if len(distinct) > 0 {
						ds = sum
					}
					want = append(want, st.Row{k, len(distinct), ds, len(distinct), n})
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

// Update mode with a watermark: a window's groups and remembered values
// are evicted together (silently), and late rows are neither counted nor
// remembered.
func TestStreamingDistinctWindowedUpdate(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update,
		"SELECT window.start AS w, count(DISTINCT v) AS dc FROM STREAM input WATERMARK ts DELAY OF INTERVAL 5 SECONDS GROUP BY window(ts, '10 seconds')")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, sec(1)}, st.Row{"a", 1, sec(2)}, st.Row{"b", 2, sec(3)}),
		st.CheckNewAnswer(st.Row{0, 2}),
		st.AddData(in, st.Row{"a", 3, sec(4)}, st.Row{"a", 1, sec(21)}),
		st.CheckNewAnswer(st.Row{0, 3}, st.Row{20, 1}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 9, sec(5)}, st.Row{"a", 1, sec(22)}, st.Row{"a", 4, sec(23)}),
		st.CheckNewAnswer(st.Row{20, 2}),
		st.AssertLastDataProgressState("numRowsDroppedByWatermark", 1),
		// Watermark 21 - 5 = 16: window [0, 10) is gone from both operators
		// (the aggregation holds [20, 30), the distinct values 1 and 4).
		st.AssertLastDataProgressState("numRowsTotal", 0).ForAllOperators(1, 2),
	)
}
