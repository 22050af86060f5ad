package arrowstream

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
)

// TestRateBoundThroughOffsetLog: a rate source whose maxRowsPerTrigger is
// under its rowsPerSecond ends epochs inside a second. The offset log
// keeps only single-line JSON offsets, so such an end must be JSON: it
// was written as "0+300" and the query failed its first epoch. Through a
// real checkpoint and a restart on it, every epoch holds at most the
// bound and the values are 0, 1, 2, … each exactly once.
func TestRateBoundThroughOffsetLog(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestSession(t)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	const bound = 300
	run := func(atLeast int) {
		t.Helper()
		q, err := s.ReadStreamFormat("rate").Option("rowsPerSecond", "1000").Option("maxRowsPerTrigger", "300").Load().
			WriteStream().Sink(sink).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(3 * time.Minute) // a progress wait, not a speed bound
		for len(sink.All()) < atLeast {
			if err := q.Exception(); err != nil {
				_ = q.Stop()
				t.Fatalf("the query failed: %v", err)
			}
			if time.Now().After(deadline) {
				_ = q.Stop()
				t.Fatalf("%d rows after 3 minutes, want %d", len(sink.All()), atLeast)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := q.Exception(); err != nil {
			t.Fatalf("the query failed: %v", err)
		}
	}
	run(2 * bound)
	run(len(sink.All()) + 2*bound) // a restart resumes from the offset log
	var vals []int64
	for _, e := range sink.Order() {
		rows := sink.Epoch(e)
		if len(rows) > bound {
			t.Fatalf("epoch %d has %d rows, over maxRowsPerTrigger %d", e, len(rows), bound)
		}
		for _, r := range rows {
			vals = append(vals, r[1].(int64))
		}
	}
	slices.Sort(vals)
	for i, v := range vals {
		if v != int64(i) {
			t.Fatalf("values %v… at %d: got %d, want %d (lost or repeated rows)", vals[max(0, i-3):min(len(vals), i+3)], i, v, i)
		}
	}
}
