package arrowstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// unprunedJoinQuery is the query of testdata/unpruned_join: a
// stream-stream join whose left input has a column (t) that only the
// filter below the join reads.
const unprunedJoinQuery = `SELECT l.key, l.v AS lv, r.v AS rv
FROM STREAM events AS l JOIN STREAM others AS r ON l.key = r.key
WHERE l.t % 2 = 0`

// unprunedJoinBatches are its input, one epoch each (left, right): the
// first three went into the checkpoint. Keys come back in later epochs,
// so rows after the restart join with rows in the restored state.
var unprunedJoinBatches = [][2][][3]int64{
	{{{1, 10, 100}, {2, 11, 200}, {3, 12, 300}}, {{1, 0, 1}}},
	{{{1, 14, 101}, {4, 16, 400}}, {{2, 0, 2}, {4, 0, 4}}},
	{{{2, 18, 201}, {5, 19, 500}}, {{3, 0, 3}}},
	{{{3, 20, 301}, {6, 22, 600}}, {{1, 0, 11}, {5, 0, 5}}},
	{{{6, 24, 601}, {2, 26, 202}}, {{6, 0, 6}, {2, 0, 12}}},
}

// runUnprunedJoin runs the query over the checkpoint in dir with the
// batches from index from on (the ones before are in the checkpoint
// already), and returns the rows emitted after the first kept batches.
func runUnprunedJoin(t *testing.T, dir string, from, kept int) []vt.Row {
	t.Helper()
	ctx := context.Background()
	s, mem := newTestSession(t)
	s.SetConf(ConfShufflePartitions, "2")
	left, right := NewMemoryStream(mem, eventSchema), NewMemoryStream(mem, eventSchema)
	defer left.Close()
	defer right.Close()
	s.RegisterStream("events", left)
	s.RegisterStream("others", right)
	for _, b := range unprunedJoinBatches[:from] {
		addEvents(t, left, b[0]...)
		addEvents(t, right, b[1]...)
	}
	sink := &collectsink.Sink{}
	rows := &newRows{sink: sink}
	q, err := s.SQLDataFrame(unprunedJoinQuery).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	var after []vt.Row
	for i := from; i < len(unprunedJoinBatches); i++ {
		addEvents(t, left, unprunedJoinBatches[i][0]...)
		addEvents(t, right, unprunedJoinBatches[i][1]...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if i >= kept {
			after = append(after, rows.take()...)
		} else {
			rows.take()
		}
	}
	return after
}

// joinStateSchema returns the checkpoint's metadata file, which records
// the state schema of its join (both sides' columns).
func joinStateSchema(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJoinInputsPrunedNewCheckpoint: a new query gives the join's left
// input only the columns read at or above the join, so its state has no
// t, and its offset log records the choice.
func TestJoinInputsPrunedNewCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if rows := runUnprunedJoin(t, dir, 0, 0); len(rows) == 0 {
		t.Fatal("the join emitted nothing: the test checks nothing")
	}
	if s := joinStateSchema(t, dir); strings.Contains(s, "t:bigint") || strings.Count(s, "key:bigint,v:bigint") != 2 {
		t.Fatalf("a new query's join state keeps the filter-only column t: %s", s)
	}
	conf, restarted, err := recordedTestConf(dir)
	if err != nil || !restarted || conf[stream.ConfPruneStreamJoinInputs] != "true" {
		t.Fatalf("the offset log records %s = %q (found %v, %v), want true", stream.ConfPruneStreamJoinInputs, conf[stream.ConfPruneStreamJoinInputs], restarted, err)
	}
}

// TestJoinInputsUnprunedOldCheckpoint restarts testdata/unpruned_join, a
// checkpoint written before join inputs were pruned (by main at
// 96da2231: its offset log records no pruning setting and its join's
// left state holds key, t and v). The restart keeps that layout (a
// pruned plan would not match the recorded state schema and be refused),
// and the rows after it are those of a fresh run over all the input.
func TestJoinInputsUnprunedOldCheckpoint(t *testing.T) {
	restored := t.TempDir()
	if err := os.CopyFS(restored, os.DirFS("testdata/unpruned_join")); err != nil {
		t.Fatal(err)
	}
	const kept = 3
	want := runUnprunedJoin(t, t.TempDir(), 0, kept)
	if len(want) == 0 {
		t.Fatal("the fresh run emitted nothing after the checkpoint's epochs: the comparison checks nothing")
	}
	got := runUnprunedJoin(t, restored, kept, kept)
	if !vt.RowsEqual(vt.SortRows(got), vt.SortRows(want)) {
		t.Fatalf("after the restart:\n%swant (fresh run)\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	if s := joinStateSchema(t, restored); !strings.Contains(s, "t:bigint") {
		t.Fatalf("the old checkpoint's join state lost its layout: %s", s)
	}
	conf, _, err := recordedTestConf(restored)
	if err != nil || conf[stream.ConfPruneStreamJoinInputs] != "false" {
		t.Fatalf("the restarted old checkpoint records %s = %q (%v), want false", stream.ConfPruneStreamJoinInputs, conf[stream.ConfPruneStreamJoinInputs], err)
	}
}

// recordedTestConf reads the settings of the newest offset record in dir.
func recordedTestConf(dir string) (map[string]string, bool, error) {
	offsets, err := checkpoint.OpenOffsetLog(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		return nil, false, err
	}
	_, seq, ok, err := offsets.Latest()
	return seq.Conf, ok, err
}
