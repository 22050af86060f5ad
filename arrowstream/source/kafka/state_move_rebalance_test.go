package kafka_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// startKeyCounts starts kagg: a count per u = the event's number (every
// event a new key), Update mode, through the hop.
func startKeyCounts(t *testing.T, s *testSession, brokerList string) *arrowstream.StreamingQuery {
	t.Helper()
	s.SetConf(arrowstream.ConfShufflePartitions, "6")
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokerList, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.ReadStream("ks").
		Select("CAST(substring(CAST(value AS STRING), 2) AS INT) AS u").
		GroupBy("u").Count().
		WriteStream().Format("memory").OutputMode(arrowstream.Update).QueryName("kagg").
		Trigger(arrowstream.ProcessingTime(50 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// countWhere returns SELECT count(*) FROM kagg WHERE cond on s.
func countWhere(t *testing.T, s *testSession, cond string) int64 {
	t.Helper()
	res, err := s.SQL(context.Background(), "SELECT count(*) FROM kagg WHERE "+cond)
	if err != nil {
		return -1 // the table is not there yet
	}
	recs, err := vector.Drain(context.Background(), res.Op)
	res.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	rows := vt.RowsOf(recs...)
	if len(rows) != 1 {
		return -1
	}
	return rows[0][0].(int64)
}

// TestClusterRebalanceTime (opt-in: ARROWSTREAM_CLUSTER_STATE_KEYS=n)
// measures how long the hop partitions of an instance that leaves take
// to resume on the survivor with state of n keys: two instances count
// n distinct keys (half the state each), one leaves, and the time runs
// from its leaving until the survivor has counted probe keys of every
// hop partition, which it can only do after restoring the partitions'
// state from the changelog topic. A leave is graceful (the group
// rebalances at once); a kill -9 adds the session timeout.
func TestClusterRebalanceTime(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ARROWSTREAM_CLUSTER_STATE_KEYS"))
	if n <= 0 {
		t.Skip("set ARROWSTREAM_CLUSTER_STATE_KEYS to the number of keys (1000000 for the issue's figure)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	b, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	startKeyCounts(t, a, bl)
	startKeyCounts(t, b, bl)
	waitGroup(t, ca, "kagg-repartition-0", 2, 6)
	start := time.Now()
	for from := 0; from < n; from += 100_000 {
		produce(t, c, "ev", 12, "a", from, min(100_000, n-from))
	}
	deadline := time.Now().Add(testutil.Scaled(30 * time.Minute))
	for {
		na, nb := countWhere(t, a, "true"), countWhere(t, b, "true")
		if na >= 0 && nb >= 0 && na+nb == int64(n) {
			t.Logf("%d keys counted by two instances (%d and %d) in %.1f s", n, na, nb, time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instances counted %d and %d keys, want %d together", na, nb, n)
		}
		time.Sleep(200 * time.Millisecond)
	}

	left := time.Now()
	b.close(t)
	const probes = 600 // keys n.., over every hop partition
	produce(t, c, "ev", 12, "a", n, probes)
	deadline = time.Now().Add(testutil.Scaled(10 * time.Minute))
	for {
		if got := countWhere(t, a, "u >= "+strconv.Itoa(n)); got == probes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the survivor never counted the probe keys")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("rebalance with %d keys of state: processing resumed on the survivor %.2f s after the other instance left (restore of its hop partitions from the changelog included)", n, time.Since(left).Seconds())
	// The restored counts are the ones the leaver had: a probe counted
	// once, and every old key still counts 1 (not restarted, not doubled).
	if got := countWhere(t, a, "count <> 1"); got != 0 {
		t.Fatalf("%d keys with a count other than 1 on the survivor", got)
	}
}
