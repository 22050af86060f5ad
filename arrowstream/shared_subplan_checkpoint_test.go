package arrowstream

import (
	"context"
	"os"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// unsharedQ5Query is the query of testdata/unshared_q5: Nexmark q5's
// shape (a CTE of sliding-window counts read by both sides of a join).
const unsharedQ5Query = `WITH c AS (
  SELECT key, window, count(*) AS n, sum(v) AS s
  FROM STREAM events WATERMARK timestamp_seconds(t) AS ts DELAY OF INTERVAL 2 SECONDS
  GROUP BY key, window(ts, '6 seconds', '2 seconds'))
SELECT c.key, c.n, c.s, m.ms, CAST(c.window.start AS BIGINT) AS ws
FROM c JOIN (SELECT window AS mw, max(n) AS mx, max(s) AS ms FROM c GROUP BY window) m
  ON c.window = m.mw AND c.n >= m.mx`

// unsharedQ5Batches are its input: the first four went into the
// checkpoint, one epoch each (and the no-data epochs they caused).
var unsharedQ5Batches = [][][3]int64{
	{{1, 100, 5}, {2, 101, 7}, {1, 101, 1}},
	{{1, 103, 2}, {3, 104, 9}, {2, 99, 4}},
	{{1, 107, 3}, {2, 108, 8}, {2, 108, 1}, {3, 100, 6}},
	{{3, 111, 2}, {1, 112, 5}, {1, 105, 7}},
	{{2, 113, 3}, {1, 114, 1}, {2, 109, 9}, {3, 118, 4}},
	{{1, 121, 6}, {3, 125, 2}, {2, 119, 5}},
	{{2, 131, 1}},
}

// TestSharedSubplanOldCheckpoint restarts testdata/unshared_q5, a
// checkpoint written before stateful subplans were shared (by main at
// 895ffe0: its offset log records no sharing setting, its state has both
// copies of the CTE's aggregation, operators 1 and 3, with 2 shuffle
// partitions). The session asks for sharing, but the checkpoint keeps its
// shape: four operators, each copy reading and writing its own state, and
// the rows after the restart are those of a fresh run over all the input
// (which shares).
func TestSharedSubplanOldCheckpoint(t *testing.T) {
	ctx := context.Background()
	restored := t.TempDir()
	if err := os.CopyFS(restored, os.DirFS("testdata/unshared_q5")); err != nil {
		t.Fatal(err)
	}
	const kept = 4
	run := func(dir string, from int) ([]vt.Row, *StreamingQueryProgress) {
		t.Helper()
		s, mem := newTestSession(t)
		s.SetConf(ConfShufflePartitions, "2")
		s.SetConf(stream.ConfShareStatefulSubplans, "true")
		src := NewMemoryStream(mem, eventSchema)
		defer src.Close()
		s.RegisterStream("events", src)
		for _, b := range unsharedQ5Batches[:from] {
			addEvents(t, src, b...) // in the checkpoint already: not read again
		}
		sink := &collectsink.Sink{}
		rows := &newRows{sink: sink}
		q, err := s.SQLDataFrame(unsharedQ5Query).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
		var after []vt.Row
		for i := from; i < len(unsharedQ5Batches); i++ {
			addEvents(t, src, unsharedQ5Batches[i]...)
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			if i >= kept {
				after = append(after, rows.take()...)
			} else {
				rows.take()
			}
		}
		return after, q.LastProgress()
	}
	want, fresh := run(t.TempDir(), 0)
	got, p := run(restored, kept)
	if len(want) == 0 {
		t.Fatal("the fresh run emitted nothing after the checkpoint's epochs: the comparison checks nothing")
	}
	if !vt.RowsEqual(vt.SortRows(got), vt.SortRows(want)) {
		t.Fatalf("after the restart:\n%swant (fresh run)\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	if len(p.StateOperators) != 4 {
		t.Fatalf("the old checkpoint runs %d stateful operators, want its 4: %s", len(p.StateOperators), p.JSON())
	}
	for _, op := range p.StateOperators {
		if op.CustomMetrics[engine.SharedReadersMetric] != 0 {
			t.Fatalf("the old checkpoint runs a shared operator: %s", p.JSON())
		}
	}
	// The copies kept the same state: both hold the open windows' groups.
	if a, b := p.StateOperators[1].NumRowsTotal, p.StateOperators[3].NumRowsTotal; a != b || a == 0 {
		t.Fatalf("the two copies hold %d and %d rows: %s", a, b, p.JSON())
	}
	if len(fresh.StateOperators) != 3 {
		t.Fatalf("a new checkpoint runs %d stateful operators, want 3 (one shared): %s", len(fresh.StateOperators), fresh.JSON())
	}
}
