package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// eventSchema is (key, t seconds, v).
var eventSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.Int64, Nullable: true},
	{Name: "t", Type: vector.Int64, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
}, nil)

// sessionQuery starts key, session start/end (s), count, sum(v) over
// session_window(timestamp_seconds(t), '10 seconds') with a watermark of
// delay seconds, on checkpoint dir.
func sessionQuery(t *testing.T, s *Session, sink *collectsink.Sink, dir string, mode OutputMode, delay int) *StreamingQuery {
	t.Helper()
	df := s.ReadStream("events").
		WithColumn("eventTime", "timestamp_seconds(t)").
		WithWatermark("eventTime", fmt.Sprintf("%d seconds", delay)).
		GroupBy("key", "session_window(eventTime, '10 seconds') AS session").Agg("count(*) AS n", "sum(v) AS s").
		Select("key", "CAST(session.start AS BIGINT) AS st", "CAST(session.end AS BIGINT) AS en", "n", "s")
	q, err := df.WriteStream().Sink(sink).OutputMode(mode).Option("checkpointLocation", dir).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func addEvents(t *testing.T, src *MemoryStream, events ...[3]int64) {
	t.Helper()
	rows := make([][]any, len(events))
	for i, e := range events {
		rows[i] = []any{e[0], e[1], e[2]}
	}
	if _, err := src.AddData(rows...); err != nil {
		t.Fatal(err)
	}
}

// Sessions merge across epochs (also across a restart): an event that
// touches two stored sessions merges them into one; touching sessions
// (end == start) merge; Append emits a session once, when its end passes
// the watermark; late events are dropped and counted.
func TestSessionWindowMergeAcrossEpochs(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	got := &newRows{sink: sink}
	q := sessionQuery(t, s, sink, dir, Append, 20)
	step := func(events [][3]int64, want []vt.Row) {
		t.Helper()
		addEvents(t, src, events...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("after %v:\n%swant\n%s", events, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
	step([][3]int64{{1, 0, 1}, {1, 5, 2}, {2, 0, 10}}, nil) // key 1 [0,15), key 2 [0,10); wm 0
	step([][3]int64{{1, 20, 4}, {2, 10, 20}}, nil)          // key 1 [20,30) apart; key 2 touches → [0,20); wm 0
	// numRowsTotal counts sessions, not keys.
	if p := q.LastProgress(); p.StateOperators[0].NumRowsTotal != 3 {
		t.Fatalf("want 3 stored sessions: %s", p.JSON())
	}
	q.Stop()
	q = sessionQuery(t, s, sink, dir, Append, 20)
	defer func() { q.Stop() }()
	step([][3]int64{{1, 14, 8}}, nil) // [14,24) bridges [0,15) and [20,30) → [0,30)
	p := q.LastProgress()
	if len(p.StateOperators) != 1 || p.StateOperators[0].OperatorName != "sessionWindowStateStoreSaveExec" || p.StateOperators[0].NumRowsTotal != 2 {
		t.Fatalf("state: %s", p.JSON())
	}
	// wm → 80: both keys' sessions end before it; key 1's new session stays.
	step([][3]int64{{1, 100, 100}}, []vt.Row{{1, 0, 30, 4, 15}, {2, 0, 20, 2, 30}})
	step([][3]int64{{3, 60, 1}, {3, 75, 1}}, nil) // [60,70) is late (≤ 80); [75,85) is kept
	if p := q.LastProgress(); p.StateOperators[0].NumRowsDroppedByWatermark != 1 {
		// the last progress may be a no-data batch: look for the data batch
		found := false
		for _, r := range q.RecentProgress() {
			if r.StateOperators[0].NumRowsDroppedByWatermark == 1 {
				found = true
			}
		}
		if !found {
			t.Fatalf("want 1 late row dropped, last progress: %s", p.JSON())
		}
	}
	step([][3]int64{{9, 200, 0}}, []vt.Row{{1, 100, 110, 1, 100}, {3, 75, 85, 1, 1}})
}

func TestSessionWindowComplete(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	sink := &collectsink.Sink{}
	q := sessionQuery(t, s, sink, t.TempDir(), Complete, 0)
	defer q.Stop()
	step := func(events [][3]int64, want []vt.Row) {
		t.Helper()
		addEvents(t, src, events...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if rows := sink.Last(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
			t.Fatalf("after %v:\n%swant\n%s", events, vt.FormatRows(rows), vt.FormatRows(want))
		}
	}
	step([][3]int64{{1, 0, 1}, {1, 30, 2}}, []vt.Row{{1, 0, 10, 1, 1}, {1, 30, 40, 1, 2}})
	// Complete never drops late rows nor evicts.
	step([][3]int64{{1, 10, 4}, {1, 100, 1}}, []vt.Row{{1, 0, 20, 2, 5}, {1, 30, 40, 1, 2}, {1, 100, 110, 1, 1}})
	step([][3]int64{{1, 19, 8}, {2, 0, 1}}, []vt.Row{{1, 0, 29, 3, 13}, {1, 30, 40, 1, 2}, {1, 100, 110, 1, 1}, {2, 0, 10, 1, 1}})
}

// Property: random events with bounded lateness (each event is either after
// the current watermark or so late that its own session ends at or before
// it) — Append's output, after a final watermark past everything, equals a
// brute-force sessionization of all non-late events.
func TestSessionWindowAppendMatchesBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewSource(seed))
			s, mem := newTestSession(t)
			src := NewMemoryStream(mem, eventSchema)
			defer src.Close()
			s.RegisterStream("events", src)
			dir := t.TempDir()
			sink := &collectsink.Sink{}
			const delay, gap = 15, 10
			q := sessionQuery(t, s, sink, dir, Append, delay)
			var kept [][3]int64
			var maxSeen, wm int64
			for epoch := 0; epoch < 24; epoch++ {
				var batch [][3]int64
				for i := rng.Intn(12); i > 0; i-- {
					key := int64(rng.Intn(4))
					var ts int64
					if rng.Intn(8) == 0 && wm > gap {
						ts = wm - gap - int64(rng.Intn(20)) // late: ts+gap ≤ wm
					} else {
						ts = wm + 1 + int64(rng.Intn(int(maxSeen-wm+12)))
					}
					ev := [3]int64{key, ts, int64(rng.Intn(100))}
					batch = append(batch, ev)
					if ts+gap > wm {
						kept = append(kept, ev)
					}
				}
				if len(batch) == 0 {
					continue
				}
				addEvents(t, src, batch...)
				if err := q.ProcessAllAvailable(ctx); err != nil {
					t.Fatal(err)
				}
				for _, ev := range batch {
					maxSeen = max(maxSeen, ev[1])
				}
				wm = max(wm, maxSeen-delay)
				if epoch%7 == 6 {
					q.Stop()
					q = sessionQuery(t, s, sink, dir, Append, delay)
				}
			}
			// Flush: a far event of another key moves the watermark past
			// every session.
			addEvents(t, src, [3]int64{99, maxSeen + 1000, 0})
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			q.Stop()
			want := bruteForceSessions(kept, gap)
			if rows := sink.All(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
				t.Fatalf("append output:\n%swant\n%s", vt.FormatRows(rows), vt.FormatRows(want))
			}
		})
	}
}

func bruteForceSessions(events [][3]int64, gap int64) []vt.Row {
	byKey := map[int64][][3]int64{}
	for _, e := range events {
		byKey[e[0]] = append(byKey[e[0]], e)
	}
	var out []vt.Row
	for key, evs := range byKey {
		sort.Slice(evs, func(a, b int) bool { return evs[a][1] < evs[b][1] })
		for lo := 0; lo < len(evs); {
			end, n, sum := evs[lo][1]+gap, int64(0), int64(0)
			hi := lo
			for hi < len(evs) && evs[hi][1] <= end {
				end = max(end, evs[hi][1]+gap)
				n++
				sum += evs[hi][2]
				hi++
			}
			out = append(out, vt.Row{key, evs[lo][1], end, n, sum})
			lo = hi
		}
	}
	return out
}
