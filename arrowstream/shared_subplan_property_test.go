package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// sharedShapes are queries that read one stateful subplan twice, over
// STREAM events (key, t, v) with the window and watermark delay filled
// in: Nexmark q5's (a CTE's per-window maximum joined back to it), a
// self-join of an aggregation, and a deduplication read by both inputs of
// a union. Both readers use every column of the subplan: a reader that
// uses fewer lets the optimizer prune its copy's aggregates, and copies
// that differ are not shared.
var sharedShapes = []struct {
	name string
	sql  func(width, slide, delay int64) string
	df   func(s *Session, delay int64) *DataFrame
}{
	{name: "q5", sql: func(width, slide, delay int64) string {
		return sharedCounts(width, slide, delay) + `
SELECT c.key, c.n, c.s, m.ms, CAST(c.window.start AS BIGINT) AS ws
FROM c JOIN (SELECT window AS mw, max(n) AS mx, max(s) AS ms FROM c GROUP BY window) m
  ON c.window = m.mw AND c.n >= m.mx`
	}},
	{name: "selfjoin", sql: func(width, slide, delay int64) string {
		return sharedCounts(width, slide, delay) + `
SELECT a.key, b.key AS bk, a.n, a.s, b.n AS bn, b.s AS bs, CAST(a.window.start AS BIGINT) AS ws
FROM c a JOIN c b ON a.window = b.window AND a.key = b.key + 1`
	}},
	{name: "union", df: func(s *Session, delay int64) *DataFrame {
		d := s.ReadStream("events").WithColumn("ts", "timestamp_seconds(t)").
			WithWatermark("ts", fmt.Sprintf("%d seconds", delay)).DropDuplicates("key", "ts")
		return d.Select("key", "t", "v").Union(d.Select("key", "t + 1000 AS t", "v"))
	}},
}

// sharedCounts is the WITH clause of the CTE c: count(*) and sum(v) per
// key and sliding window.
func sharedCounts(width, slide, delay int64) string {
	return fmt.Sprintf(`WITH c AS (
  SELECT key, window, count(*) AS n, sum(v) AS s
  FROM STREAM events WATERMARK timestamp_seconds(t) AS ts DELAY OF INTERVAL %d SECONDS
  GROUP BY key, window(ts, '%d seconds', '%d seconds'))`, delay, width, slide)
}

// sharedSide is one of the two queries a differential run compares: its
// own session, stream, sink and checkpoint.
type sharedSide struct {
	share bool
	s     *Session
	src   *MemoryStream
	sink  *collectsink.Sink
	rows  *newRows
	dir   string
	fail  atomic.Bool
	q     *StreamingQuery
}

// TestSharedSubplansMatchUnshared streams random events (out of order
// within a random lateness, some far behind: late rows) through each of
// sharedShapes twice, one query sharing the subplan and one running both
// copies (Spark's plan), and compares every epoch's rows. Restarts come at
// random steps; "toggle" flips both sessions' setting at each restart
// (the checkpoint's recorded shape must win: the shared query keeps one
// operator for both readers, the other keeps both), and "abort" fails an
// epoch in the sink after it ran (its state is aborted, the restart runs
// it again).
func TestSharedSubplansMatchUnshared(t *testing.T) {
	seeds := int64(3)
	if testing.Short() {
		seeds = 1
	}
	for _, shape := range sharedShapes {
		for _, restart := range []string{"none", "restart", "toggle", "abort"} {
			for seed := int64(1); seed <= seeds; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", shape.name, restart, seed), func(t *testing.T) {
					runSharedDifferential(t, shape.name, seed, restart, "", 20)
				})
			}
		}
	}
}

// TestSharedSubplansPebble is the differential run with the Pebble state
// store provider.
func TestSharedSubplansPebble(t *testing.T) {
	runSharedDifferential(t, "q5", 5, "restart", "pebble", 12)
}

var errSharedAbort = errors.New("sink failed on purpose")

func runSharedDifferential(t *testing.T, shapeName string, seed int64, restart, provider string, steps int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	slide := []int64{1, 2, 3}[rng.Intn(3)]
	width := slide * int64(1+rng.Intn(4))
	delay := int64(rng.Intn(4) * 3)
	var query func(s *Session) *DataFrame
	for _, sh := range sharedShapes {
		if sh.name != shapeName {
			continue
		}
		if sh.df != nil {
			query = func(s *Session) *DataFrame { return sh.df(s, delay) }
		} else {
			text := sh.sql(width, slide, delay)
			query = func(s *Session) *DataFrame { return s.SQLDataFrame(text) }
		}
	}
	sides := [2]*sharedSide{{share: true}, {share: false}}
	for _, d := range sides {
		d.s, _ = newTestSession(t)
		if provider != "" {
			pebblestate.Register(d.s)
			d.s.SetConf(ConfStateStoreProvider, provider)
		}
		d.s.SetConf(stream.ConfShareStatefulSubplans, fmt.Sprint(d.share))
		d.src = NewMemoryStream(d.s.Allocator(), eventSchema)
		defer d.src.Close()
		d.s.RegisterStream("events", d.src)
		d.sink = &collectsink.Sink{Fail: func(int64) error {
			if d.fail.CompareAndSwap(true, false) {
				return errSharedAbort
			}
			return nil
		}}
		d.rows = &newRows{sink: d.sink}
		d.dir = t.TempDir()
	}
	begin := func(d *sharedSide) {
		t.Helper()
		q, err := query(d.s).WriteStream().Sink(d.sink).OutputMode(Append).Option("checkpointLocation", d.dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d.q = q
	}
	for _, d := range sides {
		begin(d)
	}
	defer func() {
		for _, d := range sides {
			d.q.Stop()
		}
	}()
	setting := [2]bool{true, false}
	now := int64(100)
	lateness := int64(rng.Intn(12) + 1)
	total := 0
	for step := 0; step < steps; step++ {
		if restart != "none" && restart != "abort" && rng.Intn(3) == 0 {
			for i, d := range sides {
				d.q.Stop()
				if restart == "toggle" {
					setting[i] = !setting[i]
					d.s.SetConf(stream.ConfShareStatefulSubplans, fmt.Sprint(setting[i]))
				}
				begin(d)
			}
		}
		var rows [][]any
		for i := rng.Intn(12) + 1; i > 0; i-- {
			ts := now - rng.Int63n(lateness)
			if rng.Intn(8) == 0 {
				ts = now - 15 - rng.Int63n(30) // far behind: mostly late
			}
			var v any
			if rng.Intn(5) > 0 {
				v = rng.Int63n(100)
			}
			rows = append(rows, []any{int64(rng.Intn(4)), max(ts, 1), v})
		}
		now += rng.Int63n(5)
		abort := restart == "abort" && rng.Intn(3) == 0
		for _, d := range sides {
			if _, err := d.src.AddData(rows...); err != nil {
				t.Fatal(err)
			}
			if abort {
				d.fail.Store(true)
				if err := d.q.ProcessAllAvailable(ctx); err != nil && !errors.Is(err, errSharedAbort) {
					t.Fatal(err)
				}
				d.q.Stop()
				d.fail.Store(false)
				begin(d)
			}
			if err := d.q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		shared, unshared := sides[0].rows.take(), sides[1].rows.take()
		total += len(shared)
		if !vt.RowsEqual(vt.SortRows(shared), vt.SortRows(unshared)) {
			t.Fatalf("step %d (window %d/%d s, delay %d s): shared\n%sunshared\n%s", step, width, slide, delay, vt.FormatRows(shared), vt.FormatRows(unshared))
		}
		for _, d := range sides {
			checkSharedShape(t, d.q, d.share)
		}
	}
	if total == 0 {
		t.Fatal("no rows: the comparison checked nothing")
	}
}

// checkSharedShape checks that a query runs the shape its checkpoint
// recorded: one operator for both readers when shared, none when not.
func checkSharedShape(t *testing.T, q *StreamingQuery, share bool) {
	t.Helper()
	// The newest report of an epoch that ran its operators: an idle
	// trigger of a query restarted after an abort may report before this
	// run executed anything, and such a report lists no state operators
	// (as Spark's without a last execution).
	var p *StreamingQueryProgress
	recent := q.RecentProgress()
	for i := len(recent) - 1; i >= 0 && p == nil; i-- {
		if len(recent[i].StateOperators) > 0 {
			p = recent[i]
		}
	}
	if p == nil {
		return
	}
	readers := int64(0)
	for _, op := range p.StateOperators {
		readers += op.CustomMetrics[engine.SharedReadersMetric]
	}
	if want := map[bool]int64{true: 2, false: 0}[share]; readers != want {
		t.Fatalf("shared %v: the progress names %d shared readers, want %d: %s", share, readers, want, p.JSON())
	}
}
