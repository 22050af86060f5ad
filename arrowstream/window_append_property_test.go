package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// appendWindowModel is a brute-force model of a 10-second tumbling-window
// count per key in Append mode (docs/semantics.md §3–5): batch N drops the rows
// whose window end ≤ W_late(N) (the previous batch's watermark, 0 for the
// first), emits and forgets the windows whose end ≤ W_evict(N) (the
// watermark of batch N, computed from the batches before it as max event
// time − delay over all rows, late ones included, never decreasing), and
// a no-data batch follows a batch after which the watermark advanced, when
// no-data batches are enabled. Times are in seconds.
type appendWindowModel struct {
	width, delay int64
	noData       bool
	counts       map[[2]int64]int64 // (key, window start) → rows
	wm           int64              // the next batch's W_evict
	prevWm       int64              // the last batch's W_evict: the next W_late
	seen         bool               // any row seen (a watermark exists)
}

// batch runs one data batch (and the no-data batch it triggers) and
// returns the rows emitted: key, window start, count.
func (m *appendWindowModel) batch(events [][2]int64) []vt.Row {
	late, evict := m.prevWm, m.wm
	for _, e := range events {
		start := e[1] - e[1]%m.width
		if start+m.width <= late {
			continue
		}
		m.counts[[2]int64{e[0], start}]++
	}
	out := m.emit(evict)
	m.prevWm = evict
	for _, e := range events {
		m.wm = max(m.wm, e[1]-m.delay)
	}
	if m.noData && m.wm > evict {
		out = append(out, m.emit(m.wm)...)
		m.prevWm = m.wm
	}
	return out
}

func (m *appendWindowModel) emit(wm int64) []vt.Row {
	var out []vt.Row
	for k, n := range m.counts {
		if k[1]+m.width <= wm {
			out = append(out, vt.Row{k[0], k[1], n})
			delete(m.counts, k)
		}
	}
	return out
}

// TestWindowedCountAppendMatchesModel streams random events (random order
// within a random lateness, some far later, random batch sizes) through
// key, window(eventTime, '10 seconds') count(*) with a random watermark
// delay in Append mode, with and without no-data batches and with and
// without restarts at random epoch boundaries, and checks after every
// batch which windows came out, with which counts, against
// appendWindowModel.
func TestWindowedCountAppendMatchesModel(t *testing.T) {
	seeds := int64(3)
	if testing.Short() {
		seeds = 1
	}
	for _, noData := range []bool{true, false} {
		for _, restart := range []bool{false, true} {
			for seed := int64(1); seed <= seeds; seed++ {
				name := fmt.Sprintf("noData=%v/restart=%v/seed=%d", noData, restart, seed)
				t.Run(name, func(t *testing.T) { runWindowModel(t, seed, noData, restart) })
			}
		}
	}
}

func runWindowModel(t *testing.T, seed int64, noData, restart bool) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	s, mem := newTestSession(t)
	if !noData {
		s.SetConf("spark.sql.streaming.noDataMicroBatches.enabled", "false")
	}
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	got := &newRows{sink: sink}
	delay := int64(rng.Intn(4) * 5)
	m := &appendWindowModel{width: 10, delay: delay, noData: noData, counts: map[[2]int64]int64{}}
	start := func() *StreamingQuery {
		q, err := s.ReadStream("events").
			WithColumn("eventTime", "timestamp_seconds(t)").
			WithWatermark("eventTime", fmt.Sprintf("%d seconds", delay)).
			GroupBy("key", "window(eventTime, '10 seconds') AS w").Agg("count(*) AS n").
			Select("key", "CAST(w.start AS BIGINT) AS st", "n").
			WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	defer func() { q.Stop() }()
	now := int64(100)
	lateness := int64(rng.Intn(25) + 1)
	for step := 0; step < 24; step++ {
		if restart && rng.Intn(3) == 0 {
			q.Stop()
			q = start()
		}
		var events [][2]int64
		for i := rng.Intn(10) + 1; i > 0; i-- {
			ts := now - rng.Int63n(lateness)
			if rng.Intn(10) == 0 {
				ts = now - 20 - rng.Int63n(40) // far behind: mostly late
			}
			events = append(events, [2]int64{int64(rng.Intn(3)), max(ts, 1)})
		}
		now += rng.Int63n(8)
		var batch [][3]int64
		for _, e := range events {
			batch = append(batch, [3]int64{e[0], e[1], 0})
		}
		addEvents(t, src, batch...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		want := m.batch(events)
		if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("step %d (delay %d s, events %v, watermark now %d s):\n%swant\n%s", step, delay, events, m.wm, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
}
