package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// slidingModel is a brute-force model of Spark's sliding-window
// aggregation in Append mode: every row is expanded into the windows
// [s, s+width) containing it (s = start + j*slide), a copy whose window
// ends at or before W_late is dropped, and the windows whose end is at or
// below W_evict are emitted once (count(*), count(v), sum(v), min(v),
// max(v), NULL for an aggregate of no non-null value) and forgotten. A
// no-data batch follows when the watermark advanced. Times in seconds.
type slidingModel struct {
	width, slide, start, delay int64
	noData                     bool
	wins                       map[[2]int64]*slidingAcc // (key, window start)
	wm, prevWm                 int64
}

type slidingAcc struct {
	rows, n, sum, min, max int64
}

type slidingEvent struct {
	key, t int64
	v      *int64
}

func (m *slidingModel) batch(events []slidingEvent) []vt.Row {
	late, evict := m.prevWm, m.wm
	for _, e := range events {
		last := e.t - ((e.t-m.start)%m.slide+m.slide)%m.slide
		for s := last; s > e.t-m.width; s -= m.slide {
			if s+m.width <= late {
				continue // this copy is late
			}
			k := [2]int64{e.key, s}
			a := m.wins[k]
			if a == nil {
				a = &slidingAcc{}
				m.wins[k] = a
			}
			a.rows++
			if e.v != nil {
				v := *e.v
				if a.n == 0 || v < a.min {
					a.min = v
				}
				if a.n == 0 || v > a.max {
					a.max = v
				}
				a.n++
				a.sum += v
			}
		}
	}
	out := m.emit(evict)
	m.prevWm = evict
	for _, e := range events {
		m.wm = max(m.wm, e.t-m.delay)
	}
	if m.noData && m.wm > evict {
		out = append(out, m.emit(m.wm)...)
		m.prevWm = m.wm
	}
	return out
}

func (m *slidingModel) emit(wm int64) []vt.Row {
	var out []vt.Row
	for k, a := range m.wins {
		if k[1]+m.width > wm {
			continue
		}
		row := vt.Row{k[0], k[1], a.rows, a.n, nil, nil, nil}
		if a.n > 0 {
			row[4], row[5], row[6] = a.sum, a.min, a.max
		}
		out = append(out, row)
		delete(m.wins, k)
	}
	return out
}

// errSlidingAbort is the sink failure of runSlidingModel's "abort" mode.
var errSlidingAbort = errors.New("sink failed on purpose")

// TestSlidingWindowPanesMatchModel streams random events (random order
// within a random lateness, some far behind, null values) through key,
// window(eventTime, width, slide, start) with count(*), count, sum, min
// and max in Append mode, computed by panes, and checks every batch's
// output against slidingModel, with and without no-data batches, with
// restarts at random epoch boundaries, with epochs failed by the sink
// after they ran and re-run by a restart ("abort": the combination's
// scratch kept between evicting epochs must carry nothing), and with panes turned off and on
// across restarts (the state of either kind read by the other).
func TestSlidingWindowPanesMatchModel(t *testing.T) {
	seeds := int64(4)
	if testing.Short() {
		seeds = 2
	}
	for _, noData := range []bool{true, false} {
		for _, restart := range []string{"none", "restart", "toggle", "abort"} {
			for seed := int64(1); seed <= seeds; seed++ {
				name := fmt.Sprintf("noData=%v/%s/seed=%d", noData, restart, seed)
				t.Run(name, func(t *testing.T) { runSlidingModel(t, seed, noData, restart, 3, 10, 24, "") })
			}
		}
	}
}

// TestSlidingWindowPanesManyKeys is TestSlidingWindowPanesMatchModel with
// thousands of keys, so that the live state renumbers its groups
// (compaction) while panes are open.
func TestSlidingWindowPanesManyKeys(t *testing.T) {
	modes := []string{"none", "toggle"}
	if testing.Short() {
		modes = modes[1:]
	}
	for _, restart := range modes {
		t.Run(restart, func(t *testing.T) { runSlidingModel(t, 7, true, restart, 3000, 4000, 12, "") })
	}
}

// TestSlidingWindowPebbleMatchesModel runs the model test with the Pebble
// provider, whose bounded live state keeps Spark's expanded rows.
func TestSlidingWindowPebbleMatchesModel(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSlidingModel(t, seed, true, "restart", 3, 10, 16, "pebble") })
	}
}

// runSlidingModel runs steps batches of up to perBatch events over keys
// keys through the sliding window query and slidingModel (provider: the
// state store, "" for the default).
func runSlidingModel(t *testing.T, seed int64, noData bool, restart string, keys, perBatch, steps int, provider string) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	s, mem := newTestSession(t)
	if provider != "" {
		pebblestate.Register(s)
		s.SetConf(ConfStateStoreProvider, provider)
	}
	if !noData {
		s.SetConf("spark.sql.streaming.noDataMicroBatches.enabled", "false")
	}
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	dir := t.TempDir()
	// failNext makes the sink fail the next epoch it is given (the
	// "abort" mode); Fail is set once, before any query reads it.
	var failNext atomic.Bool
	sink := &collectsink.Sink{Fail: func(int64) error {
		if failNext.CompareAndSwap(true, false) {
			return errSlidingAbort
		}
		return nil
	}}
	got := &newRows{sink: sink}
	slide := []int64{1, 2, 3, 5}[rng.Intn(4)]
	width := slide * int64(2+rng.Intn(4))
	start := rng.Int63n(slide)
	delay := int64(rng.Intn(4) * 4)
	m := &slidingModel{width: width, slide: slide, start: start, delay: delay, noData: noData, wins: map[[2]int64]*slidingAcc{}}
	panes := true
	begin := func() *StreamingQuery {
		s.SetConf(stateful.ConfSlidingPanes, fmt.Sprint(panes))
		win := fmt.Sprintf("window(eventTime, '%d seconds', '%d seconds', '%d seconds') AS w", width, slide, start)
		q, err := s.ReadStream("events").
			WithColumn("eventTime", "timestamp_seconds(t)").
			WithWatermark("eventTime", fmt.Sprintf("%d seconds", delay)).
			GroupBy("key", win).Agg("count(*) AS c", "count(v) AS n", "sum(v) AS s", "min(v) AS lo", "max(v) AS hi").
			Select("key", "CAST(w.start AS BIGINT) AS st", "c", "n", "s", "lo", "hi").
			WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := begin()
	defer func() { q.Stop() }()
	now := int64(100)
	lateness := int64(rng.Intn(25) + 1)
	aborts := 0
	for step := 0; step < steps; step++ {
		if restart != "none" && rng.Intn(3) == 0 {
			q.Stop()
			if restart == "toggle" {
				panes = !panes
			}
			q = begin()
		}
		var events []slidingEvent
		var rows [][]any
		for i := rng.Intn(perBatch) + 1; i > 0; i-- {
			ts := now - rng.Int63n(lateness)
			if rng.Intn(10) == 0 {
				ts = now - 20 - rng.Int63n(40) // far behind: mostly late
			}
			e := slidingEvent{key: int64(rng.Intn(keys)), t: max(ts, 1)}
			var v any
			if rng.Intn(5) > 0 {
				x := rng.Int63n(200) - 100
				e.v, v = &x, x
			}
			events = append(events, e)
			rows = append(rows, []any{e.key, e.t, v})
		}
		now += rng.Int63n(8)
		if _, err := src.AddData(rows...); err != nil {
			t.Fatal(err)
		}
		if restart == "abort" && rng.Intn(3) == 0 {
			// The sink fails the step's first epoch after it ran (an
			// evicting one when the watermark moved): the query ends,
			// and the restart re-runs the epoch from the checkpoint.
			failNext.Store(true)
			if err := q.ProcessAllAvailable(ctx); err != nil && !errors.Is(err, errSlidingAbort) {
				t.Fatal(err)
			}
			q.Stop()
			if !failNext.Swap(false) {
				aborts++
			}
			q = begin()
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		want := m.batch(events)
		if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("step %d (window %d/%d/%d s, delay %d s, panes %v, watermark now %d s):\n%swant\n%s", step, width, slide, start, delay, panes, m.wm, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
	if restart == "abort" && aborts == 0 {
		t.Fatal("no epoch was failed: the abort mode tested nothing")
	}
}

// TestSlidingWindowUsesPanes checks that an Append-mode sliding window
// aggregation keeps one state row per key and pane (not one per window)
// when its aggregates combine exactly, and one per window with panes
// turned off, for an aggregate whose value depends on the grouping of
// its rows (a double sum, first), or a slide that does not divide the
// width.
func TestSlidingWindowUsesPanes(t *testing.T) {
	cases := []struct {
		name, window, agg string
		panes             bool
		want              int64
	}{
		// 2 keys × 5 windows; by panes (1, [100, 102)) and (2, [102, 104)).
		{"count", "'10 seconds', '2 seconds'", "count(*) AS c", true, 2},
		{"off", "'10 seconds', '2 seconds'", "count(*) AS c", false, 10},
		{"max", "'10 seconds', '2 seconds'", "max(v) AS b", true, 2},
		{"doubleSum", "'10 seconds', '2 seconds'", "sum(CAST(v AS DOUBLE)) AS c", true, 10},
		{"first", "'10 seconds', '2 seconds'", "first(v) AS c", true, 10},
		// windows starting at 93, 96, 99 (key 1) and 96, 99, 102 (key 2).
		{"ragged", "'10 seconds', '3 seconds'", "count(*) AS c", true, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, mem := newTestSession(t)
			s.SetConf(stateful.ConfSlidingPanes, fmt.Sprint(c.panes))
			src := NewMemoryStream(mem, eventSchema)
			defer src.Close()
			s.RegisterStream("events", src)
			q, err := s.ReadStream("events").
				WithColumn("eventTime", "timestamp_seconds(t)").
				WithWatermark("eventTime", "1 hour").
				GroupBy("key", "window(eventTime, "+c.window+") AS w").Agg(c.agg).
				WriteStream().Sink(&collectsink.Sink{}).OutputMode(Append).Option("checkpointLocation", t.TempDir()).Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Stop()
			addEvents(t, src, [3]int64{1, 101, 0}, [3]int64{1, 100, 0}, [3]int64{2, 103, 0})
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			p := q.LastProgress()
			if len(p.StateOperators) != 1 || p.StateOperators[0].NumRowsTotal != c.want {
				t.Fatalf("state operators %+v, want %d state rows", p.StateOperators, c.want)
			}
		})
	}
}
