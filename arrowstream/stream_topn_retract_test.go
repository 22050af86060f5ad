package arrowstream_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// retractFixture is a leak-checked stream of (k, g, x) rows under sql.
func retractFixture(t *testing.T, mode arrowstream.OutputMode, sql string) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: mode, StepTimeout: 30 * time.Second,
		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame { return sess.SQLDataFrame(sql) },
		Conf:  map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	in := s.MustAddSource("input", st.Schema(t, "k", vector.String, "g", vector.Int64, "x", vector.Int64))
	return s, in
}

// The fewest-counted values per key: a count that grows pushes a row out
// of the top 2 and lets a row from beyond rank 2 in (the retraction an
// append-only top-N never needs), across a restart.
func TestStreamingTopNOverUpdateAggregation(t *testing.T) {
	s, in := retractFixture(t, arrowstream.Update, `
		SELECT k, g, n, rn FROM (
		  SELECT k, g, n, row_number() OVER (PARTITION BY k ORDER BY n, g) AS rn
		  FROM (SELECT k, g, count(*) AS n FROM STREAM input GROUP BY k, g))
		WHERE rn <= 2`)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 2, 0}, st.Row{"a", 2, 0}, st.Row{"a", 3, 0}, st.Row{"a", 3, 0}, st.Row{"a", 3, 0}, st.Row{"b", 7, 0}),
		st.CheckLastBatch(st.Row{"a", 1, 1, 1}, st.Row{"a", 2, 2, 2}, st.Row{"b", 7, 1, 1}),
		// a/1 grows to 6: a/2 and a/3 (from rank 3) move up.
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}, st.Row{"a", 1, 0}),
		st.CheckLastBatch(st.Row{"a", 2, 2, 1}, st.Row{"a", 3, 3, 2}),
		st.StopStream(),
		st.AddData(in, st.Row{"a", 4, 0}, st.Row{"b", 8, 0}, st.Row{"b", 8, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"a", 4, 1, 1}, st.Row{"a", 2, 2, 2}, st.Row{"b", 8, 2, 2}),
		// Below the top 2 of a (a/3 grows): the ranks hold the same rows.
		st.AddData(in, st.Row{"a", 3, 0}),
		st.CheckLastBatch(),
		// Two partitions in the state, every group's row kept.
		st.AssertLastProgressState("numRowsTotal", 2).ForAllOperators(2, 6),
		st.AssertOnQuery("numKeptRows", func(s *st.Stream) error {
			p := s.Query().LastProgress()
			if got := p.StateOperators[0].CustomMetrics["numKeptRows"]; got != 6 {
				return fmt.Errorf("numKeptRows %d, want 6", got)
			}
			return nil
		}),
		st.AddData(in, st.Row{"a", 4, 0}, st.Row{"a", 4, 0}),
		st.CheckLastBatch(st.Row{"a", 2, 2, 1}, st.Row{"a", 4, 3, 2}),
		st.CheckAnswer(
			st.Row{"a", 1, 1, 1}, st.Row{"a", 2, 2, 2}, st.Row{"b", 7, 1, 1},
			st.Row{"a", 2, 2, 1}, st.Row{"a", 3, 3, 2},
			st.Row{"a", 4, 1, 1}, st.Row{"a", 2, 2, 2}, st.Row{"b", 8, 2, 2},
			st.Row{"a", 2, 2, 1}, st.Row{"a", 4, 3, 2}),
	)
}

// The QUALIFY form over a windowed-free aggregation with a sum that goes
// down as well as up (negative amounts): the top 1 per key follows.
func TestStreamingTopNOverUpdateAggregationQualify(t *testing.T) {
	s, in := retractFixture(t, arrowstream.Update, `
		SELECT k, g, sum(x) AS s FROM STREAM input GROUP BY k, g
		QUALIFY row_number() OVER (PARTITION BY k ORDER BY sum(x) DESC) = 1`)
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 10}, st.Row{"a", 2, 5}),
		st.CheckLastBatch(st.Row{"a", 1, 10}),
		st.AddData(in, st.Row{"a", 1, -8}),
		st.CheckLastBatch(st.Row{"a", 2, 5}),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 2, -4}),
		st.CheckLastBatch(st.Row{"a", 1, 2}),
	)
}

// Refused forms: PARTITION BY a column that is not a grouping key (a row
// could move between partitions, emptying a rank), and a filter between
// the aggregation and the ranking.
func TestStreamingTopNOverUpdateAggregationRefusals(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{`SELECT g, n FROM (SELECT g, count(*) AS n FROM STREAM input GROUP BY g)
		  QUALIFY row_number() OVER (PARTITION BY n ORDER BY g) <= 2`, "partitions by grouping keys of the aggregation only, not by n"},
		{`SELECT k, g, n FROM (SELECT k, g, count(*) AS n FROM STREAM input GROUP BY k, g HAVING count(*) > 1)
		  QUALIFY row_number() OVER (PARTITION BY k ORDER BY n) <= 2`, "not through *plan.Filter"},
	} {
		s, _ := retractFixture(t, arrowstream.Update, c.sql)
		st.Run(t, s, st.ExpectFailure(st.AnalysisPhase, c.want))
	}
}

// TestStreamingTopNOverUpdateProperty runs random epochs of sums that go
// up, down and to NULL, under a random N, order direction and NULL order,
// with restarts and crashes at random epochs, and checks after each epoch that the
// latest upsert per (k, rank) is a valid ranking of the model's current
// sums: the right number of ranks, each holding a current (k, g, s), the
// sort values in order, no group twice. Ties are frequent (few values);
// any order among tied rows is valid.
func TestStreamingTopNOverUpdateProperty(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			n := 1 + rng.Intn(4)
			desc, nullsFirst := rng.Intn(2) == 0, rng.Intn(2) == 0
			dir, nulls := "ASC", "NULLS LAST"
			if desc {
				dir = "DESC"
			}
			if nullsFirst {
				nulls = "NULLS FIRST"
			}
			s, in := retractFixture(t, arrowstream.Update, fmt.Sprintf(`
				SELECT k, g, s, rn FROM (
				  SELECT k, g, s, row_number() OVER (PARTITION BY k ORDER BY s %s %s) AS rn
				  FROM (SELECT k, g, sum(x) AS s FROM STREAM input GROUP BY k, g))
				WHERE rn <= %d`, dir, nulls, n))
			type group struct {
				sum   int64
				valid bool
			}
			model := map[string]map[int64]*group{}
			less := func(a, b *group) bool { // a strictly before b
				switch {
				case !a.valid || !b.valid:
					return a.valid != b.valid && (!a.valid == nullsFirst)
				case desc:
					return a.sum > b.sum
				}
				return a.sum < b.sum
			}
			check := func(s *st.Stream, model map[string]map[int64]group) error {
				rows, err := s.SinkAnswer()
				if err != nil {
					return err
				}
				view := map[string]map[int64]st.Row{}
				for _, r := range rows {
					k, rn := r[0].(string), r[3].(int64)
					if rn < 1 || rn > int64(n) {
						return fmt.Errorf("rank %d outside 1..%d: %v", rn, n, r)
					}
					if view[k] == nil {
						view[k] = map[int64]st.Row{}
					}
					view[k][rn] = r
				}
				for k, groups := range model {
					var all []*group
					for _, gr := range groups {
						all = append(all, &gr)
					}
					slices.SortStableFunc(all, func(a, b *group) int {
						if less(a, b) {
							return -1
						}
						if less(b, a) {
							return 1
						}
						return 0
					})
					want := min(n, len(all))
					if len(view[k]) != want {
						return fmt.Errorf("key %s: %d ranks held, want %d (%v)", k, len(view[k]), want, view[k])
					}
					used := map[int64]bool{}
					for i := 0; i < want; i++ {
						r, ok := view[k][int64(i+1)]
						if !ok {
							return fmt.Errorf("key %s: rank %d missing", k, i+1)
						}
						g := r[1].(int64)
						cur, ok := groups[g]
						got := group{}
						if r[2] != nil {
							got.sum, got.valid = r[2].(int64), true
						}
						if used[g] || !ok || cur != got {
							return fmt.Errorf("key %s rank %d: row %v is not a current group once (current %+v)", k, i+1, r, cur)
						}
						used[g] = true
						if less(&got, all[i]) || less(all[i], &got) {
							return fmt.Errorf("key %s rank %d: row %v, want sort value %+v", k, i+1, r, *all[i])
						}
					}
				}
				return nil
			}
			actions := []st.Action{st.StartStream(arrowstream.ProcessingTime(0), false)}
			for epoch := 0; epoch < 10; epoch++ {
				var rows []st.Row
				for i := rng.Intn(8) + 1; i > 0; i-- {
					k := string(rune('a' + rng.Intn(2)))
					g := int64(rng.Intn(6))
					if model[k] == nil {
						model[k] = map[int64]*group{}
					}
					gr := model[k][g]
					if gr == nil {
						gr = &group{}
						model[k][g] = gr
					}
					if rng.Intn(5) == 0 {
						rows = append(rows, st.Row{k, g, nil})
						continue
					}
					x := int64(rng.Intn(7) - 3)
					gr.sum += x
					gr.valid = true
					rows = append(rows, st.Row{k, g, x})
				}
				snapshot := map[string]map[int64]group{}
				for k, gs := range model {
					snapshot[k] = map[int64]group{}
					for g, gr := range gs {
						snapshot[k][g] = *gr
					}
				}
				if rng.Intn(4) == 0 {
					// A crash mid-epoch: the epoch runs again on restart, exactly once.
					actions = append(actions, st.FailNextEpoch(), st.AddData(in, rows...),
						st.ExpectFailure(st.RuntimePhase, ""), st.StartStream(arrowstream.ProcessingTime(0), false))
				} else {
					actions = append(actions, st.AddData(in, rows...))
				}
				actions = append(actions, st.AssertOnQuery(fmt.Sprintf("valid ranking after epoch %d", epoch), func(s *st.Stream) error {
					return check(s, snapshot)
				}))
				if rng.Intn(3) == 0 {
					actions = append(actions, st.StopStream(), st.StartStream(arrowstream.ProcessingTime(0), false))
				}
			}
			st.Run(t, s, actions...)
		})
	}
}

// Update mode over a windowed Update-mode aggregation, ranked per window:
// a window's partition is evicted from the top-N state once the watermark
// passes its end, and a late row changes nothing.
func TestStreamingTopNOverUpdateAggregationEvicts(t *testing.T) {
	s, in := distinctFixture(t, arrowstream.Update, `
		SELECT we, k, n, rn FROM (
		  SELECT we, k, n, row_number() OVER (PARTITION BY we ORDER BY n DESC, k) AS rn
		  FROM (SELECT window.end AS we, k, count(*) AS n
		        FROM STREAM input WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '10 seconds'), k))
		WHERE rn <= 2`)
	kept := func(want int64) st.Action {
		return st.AssertOnQuery(fmt.Sprintf("numKeptRows %d", want), func(s *st.Stream) error {
			p := s.Query().LastProgress()
			for _, op := range p.StateOperators {
				if op.OperatorName == "topN" {
					if got := op.CustomMetrics["numKeptRows"]; got != want {
						return fmt.Errorf("numKeptRows %d, want %d", got, want)
					}
					return nil
				}
			}
			return fmt.Errorf("no topN operator in %v", p.StateOperators)
		})
	}
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 0, sec(1)}, st.Row{"b", 0, sec(2)}, st.Row{"b", 0, sec(3)}, st.Row{"c", 0, sec(4)}),
		st.CheckLastBatch(st.Row{sec(10), "b", 2, 1}, st.Row{sec(10), "a", 1, 2}),
		st.AddData(in, st.Row{"c", 0, sec(4)}, st.Row{"c", 0, sec(5)}),
		st.CheckLastBatch(st.Row{sec(10), "c", 3, 1}, st.Row{sec(10), "b", 2, 2}),
		kept(3),
		st.StopStream(),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		// The watermark moves to 15 s: window [0, 10) is evicted.
		st.AddData(in, st.Row{"d", 0, sec(25)}),
		st.CheckNewAnswer(st.Row{sec(30), "d", 1, 1}),
		kept(1),
		// Late for the aggregation: dropped there, nothing changes.
		st.AddData(in, st.Row{"a", 0, sec(6)}),
		st.CheckNewAnswer(),
		kept(1),
	)
}
