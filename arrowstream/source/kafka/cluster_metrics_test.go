package kafka_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// partitionMetrics returns the per-partition offsets and lag of the last
// progress report of q that has them.
func partitionMetrics(t *testing.T, q *arrowstream.StreamingQuery) (offsets, lag map[string]int64) {
	t.Helper()
	ps := q.RecentProgress()
	for i := len(ps) - 1; i >= 0; i-- {
		if len(ps[i].Sources) == 0 {
			continue
		}
		m := ps[i].Sources[0].Metrics
		if m["partitionOffsets"] == "" {
			continue
		}
		if err := json.Unmarshal([]byte(m["partitionOffsets"]), &offsets); err != nil {
			t.Fatalf("partitionOffsets %q: %v", m["partitionOffsets"], err)
		}
		if err := json.Unmarshal([]byte(m["partitionOffsetsBehindLatest"]), &lag); err != nil {
			t.Fatalf("partitionOffsetsBehindLatest %q: %v", m["partitionOffsetsBehindLatest"], err)
		}
		return offsets, lag
	}
	return nil, nil
}

// TestClusterPartitionProgress: in cluster mode a Kafka source's progress
// names each partition the instance read, with the offset the epoch read
// up to and how far that is behind the latest: two instances split the
// 12 partitions, and together their reports cover each once, caught up.
func TestClusterPartitionProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	b, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	qa := startPassthrough(t, a, bl)
	qb := startPassthrough(t, b, bl)
	waitGroup(t, ca, "out", 2, 12)
	produce(t, c, "ev", 12, "a", 0, 1200)
	checkExactlyOnce(t, waitUnion(t, 1200, "a", a, b), values("a", 0, 1200))

	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		oa, la := partitionMetrics(t, qa)
		ob, lb := partitionMetrics(t, qb)
		seen, caughtUp := map[string]int{}, true
		for _, m := range []map[string]int64{oa, ob} {
			for p, off := range m {
				seen[p]++
				caughtUp = caughtUp && off == 100
			}
		}
		for _, m := range []map[string]int64{la, lb} {
			for _, l := range m {
				caughtUp = caughtUp && l == 0
			}
		}
		if len(seen) == 12 && len(oa) > 0 && len(ob) > 0 && len(oa)+len(ob) == 12 && caughtUp {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("per-partition progress: instance A %v (lag %v), B %v (lag %v): want the 12 partitions split between them, each read up to offset 100 with no lag", oa, la, ob, lb)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
