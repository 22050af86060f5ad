package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestMaxOffsetsPerTrigger: no epoch reads more than the limit, and all
// records arrive.
func TestMaxOffsetsPerTrigger(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 300)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events",
		"startingOffsets": "earliest", "maxOffsetsPerTrigger": "40"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	processAll(t, q)
	q.Stop()
	epochs := 0
	for _, p := range q.RecentProgress() {
		if p.NumInputRows > 40 {
			t.Fatalf("epoch %d read %d rows, more than maxOffsetsPerTrigger=40", p.BatchID, p.NumInputRows)
		}
		if p.NumInputRows > 0 {
			epochs++
		}
	}
	if epochs < 300/40 {
		t.Fatalf("%d epochs with data: the limit was not applied", epochs)
	}
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), values("a", 0, 300))
}

// TestFailOnDataLoss deletes records the query has not read yet (Kafka's
// DeleteRecords, as retention would) and deletes the topic: with
// failOnDataLoss=true the query fails naming the partition and offsets,
// with false it logs, skips what is gone, and goes on.
func TestFailOnDataLoss(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprintf("failOnDataLoss=%v", fail), func(t *testing.T) {
			c := newCluster(t, 1, "events")
			produce(t, c, "events", 1, "a", 0, 100)
			dir := t.TempDir()
			opts := map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events",
				"startingOffsets": "earliest", "failOnDataLoss": fmt.Sprint(fail)}
			start := func(s *testSession) *arrowstream.StreamingQuery {
				if err := s.RegisterSource("ks", "kafka", nil, opts); err != nil {
					t.Fatal(err)
				}
				return startCopy(t, s, "out")
			}
			s := newTestSession(t, dir)
			q := start(s)
			processAll(t, q)
			q.Stop()
			s.close(t)

			produce(t, c, "events", 1, "b", 0, 100)
			if err := c.DeleteRecords("events", 0, 150); err != nil {
				t.Fatal(err)
			}
			s = newTestSession(t, dir)
			defer s.close(t)
			q = start(s)
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
			defer cancel()
			err := q.ProcessAllAvailable(ctx)
			if fail {
				if !errors.Is(err, kafka.ErrDataLoss) || !strings.Contains(err.Error(), "offsets [100, 150) of events-0") {
					t.Fatalf("error %v, want data loss naming events-0 and [100, 150)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkExactlyOnce(t, s.stringColumn(t, "out", "v"), append(values("a", 0, 100), values("b", 50, 50)...))
			// The topic goes away: a warning, and the query keeps running.
			if err := c.DeleteTopic("events"); err != nil {
				t.Fatal(err)
			}
			processAll(t, q)
			if !q.IsActive() {
				t.Fatalf("query stopped: %v", q.Exception())
			}
		})
	}
}

// TestDeletedTopicFails: a partition that disappears is data loss.
func TestDeletedTopicFails(t *testing.T) {
	c := newCluster(t, 2, "events")
	produce(t, c, "events", 2, "a", 0, 10)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	processAll(t, q)
	if err := c.DeleteTopic("events"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	err := q.AwaitTermination(ctx)
	if !errors.Is(err, kafka.ErrDataLoss) || !strings.Contains(err.Error(), "partition events-0 was deleted") {
		t.Fatalf("error %v, want data loss naming events-0", err)
	}
}

// TestRecordSchemaAndAssign reads assigned partitions from specific
// offsets up to endingOffsets, with headers.
func TestRecordSchemaAndAssign(t *testing.T) {
	c := newCluster(t, 2, "t")
	produce(t, c, "t", 2, "a", 0, 20) // partition 1 holds a1, a3, ..., a19 at offsets 0..9
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "assign": `{"t":[1]}`,
		"startingOffsets": `{"t":{"1":5}}`, "endingOffsets": `{"t":{"1":8}}`, "includeHeaders": "true"}); err != nil {
		t.Fatal(err)
	}
	df := s.ReadStream("ks")
	if got := fmt.Sprint(df.Schema()); !strings.Contains(got, "key: type=binary") || !strings.Contains(got, "timestampType: type=int32") || !strings.Contains(got, "headers: type=list<item: struct<key: utf8, value: binary>") {
		t.Fatalf("schema: %s", got)
	}
	q, err := df.Select("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v", "topic", "partition", "offset", "timestampType", "timestamp > TIMESTAMP '2020-01-01 00:00:00' AS recent", "headers").
		WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, q)
	res, err := s.SQL(context.Background(), "SELECT * FROM out ORDER BY offset")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		t.Fatal(err)
	}
	rows := vt.RowsOf(recs...)
	for _, r := range recs {
		r.Release()
	}
	want := []string{
		"[a11 a11 t 1 5 0 true [[h a11]]]",
		"[a13 a13 t 1 6 0 true [[h a13]]]",
		"[a15 a15 t 1 7 0 true [[h a15]]]",
	}
	if len(rows) != len(want) {
		t.Fatalf("rows: %v", rows)
	}
	for i, r := range rows {
		if got := fmt.Sprint(r); got != want[i] {
			t.Errorf("row %d: %s, want %s", i, got, want[i])
		}
	}
}

// TestNewPartitionsFromEarliest: with subscribePattern and latest, the
// data before the start is skipped, and a topic created later is read
// from its beginning.
func TestNewPartitionsFromEarliest(t *testing.T) {
	c := newCluster(t, 1, "ev1")
	produce(t, c, "ev1", 1, "old", 0, 5)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribePattern": "ev[0-9]+"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	processAll(t, q)
	produce(t, c, "ev1", 1, "a", 0, 5)
	if err := c.CreateTopic("ev2", 2, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, c, "ev2", 2, "b", 0, 6)
	if err := c.CreateTopic("other", 1, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, c, "other", 1, "x", 0, 3)
	processAll(t, q)
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), append(values("a", 0, 5), values("b", 0, 6)...))
}

// TestAvailableNow: the query reads what was there when it started and
// stops.
func TestAvailableNow(t *testing.T) {
	c := newCluster(t, 2, "events")
	produce(t, c, "events", 2, "a", 0, 100)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").
		WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.AvailableNow()).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	if err := q.AwaitTermination(ctx); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), values("a", 0, 100))
}
