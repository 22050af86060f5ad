package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestSessionWindowReuseMatchesModel checks that what the session window
// keeps between epochs for reuse (its per-epoch scratch, the entries of
// evicted keys given to new keys, the end index's chunks, the snapshot
// buffers) cannot carry one epoch's sessions into the next: rounds
// alternate between a large epoch of one set of keys and a small epoch
// of another set with fewer rows, each round far enough in event time
// that the no-data batch after it evicts the round before, so the keys
// of a small epoch take the entries the large one's keys left, and key
// sets come back after being evicted. Every batch's output (the sessions
// evicted, with count, sum, min and max) is checked against the model
// (sessionModelAgg). Enough epochs run for the stores to write live
// snapshots while entries are reused, and the query restarts once
// midway (the decoded state is rebuilt from the stores).
func TestSessionWindowReuseMatchesModel(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	m := &sessionModelAgg{gap: 5, delay: 0, append: true, noData: true, sessions: map[int64][]*sessionAcc{}}
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
			WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := begin()
	defer func() { q.Stop() }()
	rng := rand.New(rand.NewSource(28))
	evicted := 0
	const rounds = 16
	for r := range rounds {
		if r == rounds/2 {
			q.Stop()
			q = begin()
		}
		// Even rounds: 400 keys, 2 to 4 rows each; odd rounds: 40 other
		// keys, one row each. Key sets cycle through three ranges.
		base := int64(r%3) * 10_000
		keys, perKey := 400, 2+rng.Intn(3)
		if r%2 == 1 {
			keys, perKey = 40, 1
			base += 5_000
		}
		t0 := int64(100 + 30*r)
		var events []slidingEvent
		var rows [][]any
		for k := range keys {
			for range perKey {
				e := slidingEvent{key: base + int64(k), t: t0 + rng.Int63n(8)}
				var v any
				if rng.Intn(4) > 0 {
					x := rng.Int63n(200) - 100
					e.v, v = &x, x
				}
				events = append(events, e)
				rows = append(rows, []any{e.key, e.t, v})
			}
		}
		rng.Shuffle(len(rows), func(i, j int) {
			rows[i], rows[j] = rows[j], rows[i]
			events[i], events[j] = events[j], events[i]
		})
		if _, err := src.AddData(rows...); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		want := m.batch(events)
		rows2 := got.take()
		if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows2)) {
			t.Fatalf("round %d (keys %d.., %d rows, watermark now %d s):\n%swant\n%s", r, base, len(events), m.wm, vt.FormatRows(rows2), vt.FormatRows(want))
		}
		evicted += len(want)
	}
	// The rounds must have evicted (so entries were reused) most of
	// what they opened: every round but the last is evicted.
	if evicted < 8*400 {
		t.Fatalf("only %d sessions evicted over %d rounds", evicted, rounds)
	}
}
