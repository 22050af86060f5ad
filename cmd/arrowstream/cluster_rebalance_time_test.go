package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// stateKeysEnv turns on TestClusterStateKillRebalanceTime with that many
// keys of state (1000000 for the figure).
const stateKeysEnv = "ARROWSTREAM_CLUSTER_STATE_KEYS"

// TestClusterStateKillRebalanceTime measures the rebalance time
// across processes: a kfake broker in a child process, two `serve`
// instances counting n distinct keys through the repartition hop (Update
// mode, 6 hop partitions, about half the state on each); one is killed
// with SIGKILL, and the time from the kill until the survivor has
// counted probe keys of every hop partition is logged. It includes the
// session timeout (6 s), both groups' rebalances, the restart of the
// survivor's downstream stage and the restore of the killed instance's
// state partitions from the changelog topic. The survivor's counts are
// checked: every probe counted once, every old key still 1.
func TestClusterStateKillRebalanceTime(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(stateKeysEnv))
	if n <= 0 {
		t.Skipf("a measurement: set %s to the number of keys (1000000 for the issue's figure)", stateKeysEnv)
	}
	bin := buildBinary(t)
	ports := freePorts(t, 3)
	brokers := fmt.Sprintf("127.0.0.1:%d", ports[0])
	startKfake(t, ports[0])
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopic(t, cl, "events")
	init := filepath.Join(t.TempDir(), "tables.sql")
	sqlText := fmt.Sprintf(`SET spark.sql.shuffle.partitions = 6;
CREATE TABLE events USING kafka OPTIONS ('kafka.bootstrap.servers' '%s', 'subscribe' 'events', 'startingOffsets' 'earliest');
CREATE STREAMING TABLE kagg TBLPROPERTIES ('outputMode' = 'update') AS
  SELECT u, count(*) AS n FROM (SELECT CAST(substring(CAST(value AS STRING), 2) AS INT) AS u FROM STREAM events) GROUP BY u;
`, brokers)
	if err := os.WriteFile(init, []byte(sqlText), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	b := &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[2])}
	a.start(t, bin, brokers, init)
	b.start(t, bin, brokers, init)
	waitStableGroups(t, a.addr, map[string]int64{"kagg": clusterPartitions, "kagg-repartition-0": 6}, 2)

	start := time.Now()
	for from := 0; from < n; from += 10000 {
		produceEvents(t, cl, from, min(10000, n-from))
	}
	deadline := time.Now().Add(testutil.Scaled(30 * time.Minute))
	for {
		na, nb := localInt(t, a, "SELECT count(*) FROM kagg"), localInt(t, b, "SELECT count(*) FROM kagg")
		if na+nb == int64(n) {
			t.Logf("%d keys counted by two instances (%d and %d) in %.1f s", n, na, nb, time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instances counted %d and %d keys, want %d together", na, nb, n)
		}
		time.Sleep(500 * time.Millisecond)
	}

	killed := time.Now()
	if err := b.p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-b.p.exited
	const probes = 600 // keys n.., over every hop partition
	produceEvents(t, cl, n, probes)
	probeQuery := "SELECT count(*) FROM kagg WHERE u >= " + strconv.Itoa(n)
	deadline = time.Now().Add(testutil.Scaled(10 * time.Minute))
	for localInt(t, a, probeQuery) != probes {
		if time.Now().After(deadline) {
			t.Fatalf("the survivor never counted the probe keys (%d of %d)", localInt(t, a, probeQuery), probes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("rebalance with %d keys of state across processes: the survivor counted probe keys of every hop partition %.2f s after the kill -9 (session timeout 6 s, restore from the changelog included)",
		n, time.Since(killed).Seconds())
	// The restored counts are the killed instance's: every key once.
	if got := localInt(t, a, "SELECT count(*) FROM kagg WHERE n <> 1"); got != 0 {
		t.Fatalf("%d keys with a count other than 1 on the survivor", got)
	}
	a.p.interrupt(t)
}

// localInt is the single BIGINT a query gives over the instance's own rows.
func localInt(t *testing.T, ci *clusterInstance, query string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, clusterLocalHeader, "1")
	recs, err := readSQL(ctx, ci.addr, query)
	if err != nil {
		t.Fatalf("%s on %s: %v", query, ci.addr, err)
	}
	defer releaseRecords(recs)
	if len(recs) == 0 || recs[0].NumRows() != 1 {
		t.Fatalf("%s on %s: want one row", query, ci.addr)
	}
	return recs[0].Column(0).(*array.Int64).Value(0)
}
