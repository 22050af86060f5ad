package kafka_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
)

// TestClusterBatchHoldSetting: the session setting reaches a cluster
// query's Kafka input when it starts (an invalid value refuses the query,
// naming the setting), SET accepts it, and a query under it, 0 (off) or
// a cap, reads its rows.
func TestClusterBatchHoldSetting(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster group takes seconds to form (-short)")
	}
	c := newCluster(t, 3, "ev")
	bl := brokers(c)
	s, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer s.close(t)
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	s.SetConf(kafka.ConfClusterBatchHold, "soon")
	_, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").WriteStream().Format("memory").QueryName("bad").Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), kafka.ConfClusterBatchHold) {
		t.Fatalf("a query under %s = soon started (err %v)", kafka.ConfClusterBatchHold, err)
	}
	r, err := s.SQL(context.Background(), "SET arrowstream.cluster.batchHold = 0")
	if err != nil {
		t.Fatalf("SET: %v", err)
	}
	r.Close()
	q := startPassthrough(t, s, bl)
	defer q.Stop()
	produce(t, c, "ev", 3, "p0-", 0, 90)
	checkExactlyOnce(t, waitUnion(t, 90, "p", s), allValues(1, 90))
}
