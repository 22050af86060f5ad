package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// waitRows waits until the sessions' tables out hold n rows in all.
func waitRows(t *testing.T, n int, sessions ...*testSession) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		k := 0
		for _, s := range sessions {
			k += len(s.stringColumn(t, "out", "v"))
		}
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows in out, want %d", k, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dataEpochs lists the input rows of the query's epochs that read any.
func dataEpochs(q *arrowstream.StreamingQuery) []int64 {
	var out []int64
	for _, p := range q.RecentProgress() {
		if p.NumInputRows > 0 {
			out = append(out, p.NumInputRows)
		}
	}
	return out
}

// TestMinOffsetsPerTrigger: after the first epoch, no epoch reads fewer
// than minOffsetsPerTrigger offsets while maxTriggerDelay has not
// passed; every record is read once. Data produced in two parts, each
// below the minimum, is read in one epoch once the sum reaches it.
func TestMinOffsetsPerTrigger(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 30)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events",
		"startingOffsets": "earliest", "minOffsetsPerTrigger": "100", "maxTriggerDelay": "1h"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	defer q.Stop()
	waitRows(t, 30, s) // the first epoch is let through (Spark's)
	// 50 then 60: the 50 wait; one epoch reads the 110.
	produce(t, c, "events", 3, "b", 0, 50)
	produce(t, c, "events", 3, "b", 50, 60)
	waitRows(t, 140, s)
	produce(t, c, "events", 3, "c", 0, 99)
	processAll(t, q) // held: not read, not waited for
	if err := q.Exception(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.stringColumn(t, "out", "v")); n != 140 {
		t.Fatalf("%d rows read with 99 offsets held for minOffsetsPerTrigger=100, want 140", n)
	}
	produce(t, c, "events", 3, "c", 99, 1)
	waitRows(t, 240, s)
	q.Stop()
	epochs := dataEpochs(q)
	if len(epochs) == 0 || epochs[0] != 30 {
		t.Fatalf("epochs %v: the first should read the 30 records", epochs)
	}
	for _, n := range epochs[1:] {
		if n < 100 {
			t.Fatalf("epochs %v: one read fewer than minOffsetsPerTrigger=100", epochs)
		}
	}
	want := append(append(values("a", 0, 30), values("b", 0, 110)...), values("c", 0, 100)...)
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), want)
}

// TestMaxTriggerDelay: records below minOffsetsPerTrigger are read once
// maxTriggerDelay has passed since the last epoch.
func TestMaxTriggerDelay(t *testing.T) {
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "a", 0, 30)
	s := newTestSession(t, t.TempDir())
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers(c), "subscribe": "events",
		"startingOffsets": "earliest", "minOffsetsPerTrigger": "1000", "maxTriggerDelay": "200ms"}); err != nil {
		t.Fatal(err)
	}
	q := startCopy(t, s, "out")
	defer q.Stop()
	waitRows(t, 30, s)
	produce(t, c, "events", 3, "b", 0, 20)
	waitRows(t, 50, s)
	q.Stop()
	checkExactlyOnce(t, s.stringColumn(t, "out", "v"), append(values("a", 0, 30), values("b", 0, 20)...))
}

// TestClusterMinOffsetsPerTrigger: in cluster mode the minimum counts
// each instance's own partitions; two instances share 12 partitions,
// every epoch after an instance's first reads at least the minimum, and
// the union holds every record once (each instance's last records, below
// the minimum, are read after maxTriggerDelay).
func TestClusterMinOffsetsPerTrigger(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	b, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer a.close(t)
	defer b.close(t)
	var qs []*arrowstream.StreamingQuery
	for _, s := range []*testSession{a, b} {
		if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev",
			"startingOffsets": "earliest", "minOffsetsPerTrigger": "200", "maxTriggerDelay": "2s"}); err != nil {
			t.Fatal(err)
		}
		q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").
			WriteStream().Format("memory").QueryName("out").Start(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
		qs = append(qs, q)
	}
	waitSharing(t, ca, 2)
	total := 0
	for i := range 30 {
		produce(t, c, "ev", 12, fmt.Sprintf("p%d-", i), 0, 120)
		total += 120
	}
	checkExactlyOnce(t, waitUnion(t, total, "p", a, b), allValues(30, 120))
	for _, q := range qs {
		q.Stop()
		epochs, starts, planning := dataEpochTimes(t, q)
		if len(epochs) < 2 {
			t.Fatalf("epochs %v: each instance should read its six partitions in several epochs", epochs)
		}
		// The first epoch is let through. A later one may read fewer
		// than the minimum only when maxTriggerDelay (2 s) has passed
		// since the source let the epoch before through: each
		// instance's last records, and any records left when the
		// producer (slow on a loaded machine) pauses longer than the
		// delay. The source decides inside its epoch's latestOffset
		// phase, which starts at the progress timestamp (the trigger's
		// start, in whole milliseconds) and lasts the phase's duration
		// (truncated to milliseconds): so the decision of epoch i came
		// at most planning[i]+1 ms after its start, and that of epoch
		// i-1 no earlier than its start. The bound allows for that and
		// for the timestamps' rounding, and holds at any load.
		for i := 1; i < len(epochs); i++ {
			gap := starts[i].Sub(starts[i-1])
			bound := 2*time.Second - planning[i] - 3*time.Millisecond
			if epochs[i] < 200 && gap < bound {
				t.Fatalf("epochs %v: epoch %d read %d < minOffsetsPerTrigger=200 only %v after the one before (maxTriggerDelay 2s, its planning took %v)", epochs, i, epochs[i], gap, planning[i])
			}
		}
	}
}

// dataEpochTimes lists the input rows, the trigger start and the
// latestOffset phase's duration (where the source decides whether the
// epoch waits) of the query's epochs that read any.
func dataEpochTimes(t *testing.T, q *arrowstream.StreamingQuery) ([]int64, []time.Time, []time.Duration) {
	t.Helper()
	var rows []int64
	var starts []time.Time
	var planning []time.Duration
	for _, p := range q.RecentProgress() {
		if p.NumInputRows == 0 {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z", p.Timestamp)
		if err != nil {
			t.Fatalf("progress timestamp %q: %v", p.Timestamp, err)
		}
		rows, starts = append(rows, p.NumInputRows), append(starts, at)
		planning = append(planning, time.Duration(p.DurationMs["latestOffset"])*time.Millisecond)
	}
	return rows, starts, planning
}

func allValues(parts, n int) []string {
	var out []string
	for i := range parts {
		out = append(out, values(fmt.Sprintf("p%d-", i), 0, n)...)
	}
	return out
}

// waitSharing waits until n members share the 12 partitions of the
// table out (the group may not exist yet when it starts).
func waitSharing(t *testing.T, c *kafka.Cluster, n int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		ms, err := c.TableMembers(context.Background(), "out")
		holders, parts := 0, 0
		for _, m := range ms {
			parts += len(m.Partitions)
			if len(m.Partitions) > 0 {
				holders++
			}
		}
		if err == nil && len(ms) == n && holders == n && parts == 12 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("members %+v (err %v): want %d members sharing 12 partitions", ms, err, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
