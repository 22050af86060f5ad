package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// windowModel is an independent model of a 10-second tumbling-window count
// per key with a watermark, in Append mode (docs/semantics.md §3.2–3.5): batches
// (data and no-data) each see an eviction watermark (the global watermark
// when the batch starts) and a late-event watermark (the previous batch's
// eviction watermark, 0 for the first batch). A row is late iff its
// window's end ≤ the late watermark (the aggregation's late predicate is on
// the grouping key, the window struct); a window is emitted once when its
// end ≤ the eviction watermark. The global watermark is max event time
// seen minus the delay, never decreasing, and after a data batch that
// advances it a no-data batch runs.
type windowModel struct {
	windowMs, delayMs int64
	batches           int                // batches run so far
	lastEvict         int64              // eviction watermark of the last batch
	global            int64              // watermark from all data so far
	counts            map[[2]int64]int64 // (key, window start ms) → count, not yet emitted
	emitted           map[[2]int64]bool
	late              int // rows dropped as late
}

func newWindowModel(windowMs, delayMs int64) *windowModel {
	return &windowModel{windowMs: windowMs, delayMs: delayMs, counts: map[[2]int64]int64{}, emitted: map[[2]int64]bool{}}
}

// batch runs one batch over events ((key, event time ms) pairs) and returns
// the rows it emits as (key, window start s, count).
func (m *windowModel) batch(events [][2]int64) []vt.Row {
	lateWm := m.lastEvict
	if m.batches == 0 {
		lateWm = 0
	}
	evict := m.global
	maxT, any := int64(0), false
	for _, e := range events {
		start := e[1] - ((e[1]%m.windowMs)+m.windowMs)%m.windowMs
		if start+m.windowMs <= lateWm {
			m.late++
		} else {
			m.counts[[2]int64{e[0], start}]++
		}
		if !any || e[1] > maxT {
			maxT, any = e[1], true
		}
	}
	var out []vt.Row
	for k, n := range m.counts {
		if k[1]+m.windowMs <= evict {
			if m.emitted[k] {
				panic(fmt.Sprintf("model: window %v emitted twice", k))
			}
			m.emitted[k] = true
			out = append(out, vt.Row{k[0], k[1] / 1000, n})
			delete(m.counts, k)
		}
	}
	m.batches++
	m.lastEvict = evict
	if any && maxT-m.delayMs > m.global {
		m.global = maxT - m.delayMs
	}
	return out
}

// step runs a data batch and, when it advanced the watermark, the no-data
// batch that follows it.
func (m *windowModel) step(events [][2]int64) []vt.Row {
	out := m.batch(events)
	if m.global > m.lastEvict {
		out = append(out, m.batch(nil)...)
	}
	return out
}

// bruteForce counts all non-late rows per (key, window) over all epochs,
// given each epoch's late watermark, keeping the windows whose end is at or
// below the final watermark (the ones Append has emitted).
func bruteForce(epochs [][][2]int64, lateWms []int64, finalWm, windowMs int64) []vt.Row {
	counts := map[[2]int64]int64{}
	for i, ep := range epochs {
		for _, e := range ep {
			start := e[1] - ((e[1]%windowMs)+windowMs)%windowMs
			if start+windowMs > lateWms[i] && start+windowMs <= finalWm {
				counts[[2]int64{e[0], start}]++
			}
		}
	}
	var out []vt.Row
	for k, n := range counts {
		out = append(out, vt.Row{k[0], k[1] / 1000, n})
	}
	return out
}

func windowCountQuery(t *testing.T, s *Session, sink *collectsink.Sink, dir string) *StreamingQuery {
	t.Helper()
	df := s.ReadStream("events").
		WithColumn("ts", "timestamp_millis(t)").
		WithWatermark("ts", "5 seconds").
		GroupBy("window(ts, '10 seconds') AS w", "key").Agg("count(*) AS n").
		Select("key", "CAST(w.start AS BIGINT) AS ws", "n")
	q, err := df.WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// For random event streams (out of order within a bounded lateness, random
// epochs, restarts every few epochs), the windowed Append count emits, epoch
// by epoch, exactly what the model emits, and in total exactly the
// brute-force count over the non-late rows.
func TestWindowCountAppendProperty(t *testing.T) {
	for seed := int64(1); seed <= 9; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			ctx := context.Background()
			s, mem := newTestSession(t)
			src := NewMemoryStream(mem, eventSchema)
			defer src.Close()
			s.RegisterStream("events", src)
			dir := t.TempDir()
			sink := &collectsink.Sink{}
			got := &newRows{sink: sink}
			q := windowCountQuery(t, s, sink, dir)
			defer func() { q.Stop() }()

			const windowMs, delayMs = 10_000, 5_000
			model := newWindowModel(windowMs, delayMs)
			restartEvery := 2 + rng.Intn(4)
			nKeys := 2 + rng.Intn(4)
			maxLate := int64(15_000 + rng.Intn(20_000)) // beyond the delay: some rows are late
			gran := []int64{1, 1_000, 5_000}[seed%3]
			clock := int64(20_000 + rng.Intn(10_000))
			var epochs [][][2]int64
			var lateWms []int64
			var all []vt.Row
			remaining := 300 + rng.Intn(200)
			for ep := 0; remaining > 0; ep++ {
				n := rng.Intn(60)
				if n > remaining {
					n = remaining
				}
				remaining -= n
				events := make([][2]int64, n)
				rows := make([][]any, n)
				for i := range events {
					clock += int64(rng.Intn(400))
					// Event times on window edges exercise the inclusive predicates.
					t := clock - rng.Int63n(maxLate)
					// Coarse clocks (whole seconds, 5 s) put the watermark on
					// window ends, where the inclusive predicates matter.
					t -= t % gran
					if rng.Intn(10) == 0 {
						t -= t % 5_000
					}
					events[i] = [2]int64{int64(rng.Intn(nKeys)), t}
					rows[i] = []any{events[i][0], events[i][1], int64(0)}
				}
				lateWm := model.lastEvict
				if model.batches == 0 {
					lateWm = 0
				}
				epochs, lateWms = append(epochs, events), append(lateWms, lateWm)
				want := model.step(events)
				if n > 0 {
					if _, err := src.AddData(rows...); err != nil {
						t.Fatal(err)
					}
				}
				if err := q.ProcessAllAvailable(ctx); err != nil {
					t.Fatal(err)
				}
				rows2 := got.take()
				if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows2)) {
					t.Fatalf("epoch %d (late wm %d, wm %d):\n%swant\n%s", ep, lateWm, model.global, vt.FormatRows(rows2), vt.FormatRows(want))
				}
				all = append(all, rows2...)
				if p := q.LastProgress(); p != nil && model.batches > 0 {
					// The engine's watermark is the model's.
					if wm := p.EventTime["watermark"]; wm != time.UnixMilli(model.lastEvict).UTC().Format("2006-01-02T15:04:05.000Z") {
						t.Fatalf("epoch %d: engine watermark %s, model %s", ep, wm, time.UnixMilli(model.lastEvict).UTC().Format("2006-01-02T15:04:05.000Z"))
					}
				}
				if ep%restartEvery == restartEvery-1 {
					q.Stop()
					q = windowCountQuery(t, s, sink, dir)
				}
			}
			want := bruteForce(epochs, lateWms, model.lastEvict, windowMs)
			if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(all)) {
				t.Fatalf("all output:\n%swant\n%s", vt.FormatRows(all), vt.FormatRows(want))
			}
			if len(all) == 0 || model.late == 0 {
				t.Fatalf("weak case: %d windows emitted, %d late rows", len(all), model.late)
			}
			t.Logf("%d epochs, %d windows emitted, %d late rows, final watermark %d ms", len(epochs), len(all), model.late, model.lastEvict)
		})
	}
}
