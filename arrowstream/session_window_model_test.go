package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// sessionModelAgg is a brute-force model of Spark's session-window
// aggregation (key, session_window(eventTime, gap) with count(*),
// count(v), sum(v), min(v), max(v)): every kept event's session
// [t, t+gap) merges with each stored session of its key that it overlaps
// or touches. Append drops an event whose session ends at or before
// W_late and emits (and forgets) the sessions whose end is at or below
// W_evict, with a no-data batch when the watermark advanced; Complete
// emits every session every batch and drops nothing. Times in seconds.
type sessionModelAgg struct {
	gap, delay int64
	append     bool
	noData     bool
	sessions   map[int64][]*sessionAcc // by key, sorted by start
	wm, prevWm int64
}

type sessionAcc struct {
	start, end             int64
	rows, n, sum, min, max int64
}

func (m *sessionModelAgg) add(e slidingEvent) {
	s := &sessionAcc{start: e.t, end: e.t + m.gap, rows: 1}
	if e.v != nil {
		s.n, s.sum, s.min, s.max = 1, *e.v, *e.v, *e.v
	}
	var keep []*sessionAcc
	for _, o := range m.sessions[e.key] {
		if o.start > s.end || s.start > o.end {
			keep = append(keep, o)
			continue
		}
		s.start, s.end = min(s.start, o.start), max(s.end, o.end)
		if o.n > 0 {
			if s.n == 0 || o.min < s.min {
				s.min = o.min
			}
			if s.n == 0 || o.max > s.max {
				s.max = o.max
			}
		}
		s.rows += o.rows
		s.n += o.n
		s.sum += o.sum
	}
	// Stored sessions neither overlap nor touch one another, so growing
	// s by one of them cannot reach another that s did not reach: one
	// pass merges every one it must.
	keep = append(keep, s)
	sort.Slice(keep, func(i, j int) bool { return keep[i].start < keep[j].start })
	m.sessions[e.key] = keep
}

func (m *sessionModelAgg) batch(events []slidingEvent) []vt.Row {
	late, evict := m.prevWm, m.wm
	for _, e := range events {
		if m.append && e.t+m.gap <= late {
			continue
		}
		m.add(e)
	}
	var out []vt.Row
	if m.append {
		out = m.emit(evict)
		m.prevWm = evict
	} else {
		out = m.all()
	}
	for _, e := range events {
		m.wm = max(m.wm, e.t-m.delay)
	}
	if m.append && m.noData && m.wm > evict {
		out = append(out, m.emit(m.wm)...)
		m.prevWm = m.wm
	}
	return out
}

func (a *sessionAcc) row(key int64) vt.Row {
	r := vt.Row{key, a.start, a.end, a.rows, a.n, nil, nil, nil}
	if a.n > 0 {
		r[5], r[6], r[7] = a.sum, a.min, a.max
	}
	return r
}

func (m *sessionModelAgg) emit(wm int64) []vt.Row {
	var out []vt.Row
	for k, ss := range m.sessions {
		var keep []*sessionAcc
		for _, s := range ss {
			if s.end <= wm {
				out = append(out, s.row(k))
			} else {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			delete(m.sessions, k)
		} else {
			m.sessions[k] = keep
		}
	}
	return out
}

func (m *sessionModelAgg) all() []vt.Row {
	var out []vt.Row
	for k, ss := range m.sessions {
		for _, s := range ss {
			out = append(out, s.row(k))
		}
	}
	return out
}

// TestSessionWindowMatchesModel streams random events (random order
// within a random lateness, some far behind, null values, random gap and
// delay) through session windows and checks every batch's output against
// sessionModelAgg: Append with and without no-data batches and Complete,
// with restarts at random epoch boundaries (after enough epochs for the
// stores to have written snapshots, so a restart rebuilds the live
// sessions from a snapshot and the changelog after it), with the memory
// provider and with Pebble. The session allocator is checked to end at
// zero (newTestSession).
func TestSessionWindowMatchesModel(t *testing.T) {
	seeds := int64(3)
	steps := 40
	if testing.Short() {
		seeds, steps = 2, 24
	}
	for _, provider := range []string{"", "pebble"} {
		for _, mode := range []string{"append", "append-noData", "complete"} {
			for seed := int64(1); seed <= seeds; seed++ {
				name := fmt.Sprintf("provider=%s/%s/seed=%d", provider, mode, seed)
				t.Run(name, func(t *testing.T) { runSessionModel(t, seed, mode, provider, 5, 12, steps) })
			}
		}
	}
}

// TestSessionWindowManyKeysMatchesModel is the model test with thousands
// of keys over the three shuffle partitions.
func TestSessionWindowManyKeysMatchesModel(t *testing.T) {
	runSessionModel(t, 11, "append-noData", "", 2000, 3000, 16)
}

func runSessionModel(t *testing.T, seed int64, mode, provider string, keys, perBatch, steps int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	s, mem := newTestSession(t)
	if provider != "" {
		pebblestate.Register(s)
		s.SetConf(ConfStateStoreProvider, provider)
	}
	m := &sessionModelAgg{gap: int64(1 + rng.Intn(6)), delay: int64(rng.Intn(4) * 3),
		append: mode != "complete", noData: mode == "append-noData", sessions: map[int64][]*sessionAcc{}}
	if !m.noData {
		s.SetConf("spark.sql.streaming.noDataMicroBatches.enabled", "false")
	}
	out := Append
	if !m.append {
		out = Complete
	}
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	got := &newRows{sink: sink}
	begin := func() *StreamingQuery {
		q, err := s.ReadStream("events").
			WithColumn("eventTime", "timestamp_seconds(t)").
			WithWatermark("eventTime", fmt.Sprintf("%d seconds", m.delay)).
			GroupBy("key", fmt.Sprintf("session_window(eventTime, '%d seconds') AS w", m.gap)).
			Agg("count(*) AS c", "count(v) AS n", "sum(v) AS s", "min(v) AS lo", "max(v) AS hi").
			Select("key", "CAST(w.start AS BIGINT) AS st", "CAST(w.end AS BIGINT) AS en", "c", "n", "s", "lo", "hi").
			WriteStream().Sink(sink).OutputMode(out).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := begin()
	defer func() { q.Stop() }()
	now := int64(100)
	lateness := int64(rng.Intn(20) + 1)
	for step := 0; step < steps; step++ {
		if rng.Intn(4) == 0 {
			q.Stop()
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
		now += rng.Int63n(6)
		if _, err := src.AddData(rows...); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		want := m.batch(events)
		if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("step %d (gap %d s, delay %d s, watermark now %d s):\n%swant\n%s", step, m.gap, m.delay, m.wm, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
}
