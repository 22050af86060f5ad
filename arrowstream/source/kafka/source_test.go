package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// startCopy starts a query copying the Kafka table ks's values (as
// strings) into the durable memory table out.
func startCopy(t *testing.T, s *testSession, name string) *arrowstream.StreamingQuery {
	t.Helper()
	q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v", "topic", "partition", "offset").
		WriteStream().Format("memory").QueryName(name).OutputMode(arrowstream.Append).
		Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSourceRestart stops a query mid-stream (maxOffsetsPerTrigger keeps
// it from reading everything at once), produces more, restarts it on the
// same checkpoint, and finds every record exactly once in the durable
// memory sink.
func TestSourceRestart(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 600)
	dir := t.TempDir()
	opts := map[string]string{
		"kafka.bootstrap.servers": brokers(c), "subscribe": "events",
		"startingOffsets": "earliest", "maxOffsetsPerTrigger": "50",
	}
	run := func(stopEarly bool) {
		s := newTestSession(t, dir)
		defer s.close(t)
		if err := s.RegisterSource("ks", "kafka", nil, opts); err != nil {
			t.Fatal(err)
		}
		q := startCopy(t, s, "out")
		if stopEarly {
			deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
			for q.LastProgress() == nil || q.LastProgress().BatchID < 3 {
				if time.Now().After(deadline) || !q.IsActive() {
					t.Fatalf("query did not progress: %v", q.Exception())
				}
				time.Sleep(time.Millisecond)
			}
		} else {
			processAll(t, q)
		}
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
		if stopEarly {
			if got := s.stringColumn(t, "out", "v"); len(got) >= 600 {
				t.Fatalf("the query read everything (%d rows) before it was stopped", len(got))
			}
			return
		}
		checkExactlyOnce(t, s.stringColumn(t, "out", "v"), append(values("a", 0, 600), values("b", 0, 300)...))
	}
	run(true)
	produce(t, c, "events", 3, "b", 0, 300)
	run(false)
}
