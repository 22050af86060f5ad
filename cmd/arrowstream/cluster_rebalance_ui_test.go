package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterRebalancesInUI: a serve instance of a cluster, with the web
// UI on, records the rebalances of its table's group: its first
// assignment (all 12 partitions; processing resumes once data comes, so
// the pause is known) and, when a second instance joins, the partitions
// it gave up. Read through the HTTP API (/api/cluster/rebalances) and
// through SQL (system.cluster_rebalances); the UI page shows the section.
func TestClusterRebalancesInUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and two serve processes (-short)")
	}
	bin := buildBinary(t)
	ports := freePorts(t, 4)
	brokers := fmt.Sprintf("127.0.0.1:%d", ports[0])
	startKfake(t, ports[0])
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopic(t, cl, "rb")
	init := filepath.Join(t.TempDir(), "tables.sql")
	sqlText := fmt.Sprintf(`CREATE TABLE events USING kafka OPTIONS ('kafka.bootstrap.servers' '%s', 'subscribe' 'rb', 'startingOffsets' 'earliest');
CREATE STREAMING TABLE passthrough AS SELECT CAST(value AS STRING) AS v FROM STREAM events;
`, brokers)
	if err := os.WriteFile(init, []byte(sqlText), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	a.p = startProcess(t, bin, "serve", "--checkpoint", a.dir, "--addr", a.addr, "--http", fmt.Sprintf("127.0.0.1:%d", ports[3]), "--status", "off",
		"--cluster", brokers, "--cluster-name", "ui", "--cluster-session-timeout", "6s", "--init", init)
	web := a.p.httpURL
	if web == "" {
		t.Fatalf("no web UI address in the banner:\n%s", a.p.output())
	}
	waitGroupOf(t, a, "passthrough", 1)
	produceN := func(from, to int) {
		t.Helper()
		var recs []*kgo.Record
		for j := from; j < to; j++ {
			recs = append(recs, &kgo.Record{Topic: "rb", Partition: int32(j % clusterPartitions), Value: []byte("e" + strconv.Itoa(j))})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produceN(0, 120)

	// The first assignment, resumed once the data was claimed.
	first := waitRebalances(t, web, func(rs []rebalanceInfo) bool {
		return len(rs) >= 1 && len(rs[0].Assigned) == clusterPartitions && rs[0].PausedMs != nil
	})
	if rb := first[0]; rb.Table != "passthrough" || rb.Group != "ui-passthrough" || rb.Owned != clusterPartitions || len(rb.Revoked) != 0 || rb.Generation < 1 {
		t.Fatalf("first rebalance %+v", rb)
	}

	// A second instance joins: the first gives partitions up.
	b := &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[2])}
	b.startIn(t, bin, brokers, "ui", init)
	defer b.p.interrupt(t)
	waitGroupOf(t, a, "passthrough", 2)
	produceN(120, 240)
	rs := waitRebalances(t, web, func(rs []rebalanceInfo) bool {
		last := rs[len(rs)-1]
		return len(rs) >= 2 && len(last.Revoked) > 0 && last.PausedMs != nil
	})
	last := rs[len(rs)-1]
	if last.Owned != clusterPartitions-len(last.Revoked)+len(last.Assigned) || last.Generation <= first[0].Generation {
		t.Fatalf("rebalance after the join %+v (first %+v)", last, first[0])
	}

	// The same through SQL.
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	recs, err := readSQL(ctx, a.addr, "SELECT table_name, num_assigned, num_revoked, owned_after, paused_ms FROM system.cluster_rebalances ORDER BY start_time")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecords(recs)
	var rows int
	var sawRevoke bool
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			rows++
			if r.Column(0).(*array.String).Value(i) != "passthrough" {
				t.Fatalf("table %s", r.Column(0).(*array.String).Value(i))
			}
			if r.Column(2).(*array.Int64).Value(i) > 0 {
				sawRevoke = true
			}
		}
	}
	if rows < 2 || !sawRevoke || recs[0].Column(1).(*array.Int64).Value(0) != clusterPartitions || recs[0].Column(4).IsNull(0) {
		t.Fatalf("system.cluster_rebalances: %d rows, revoke seen %v: %v", rows, sawRevoke, recs)
	}

	// The page has the cluster section.
	resp, err := http.Get(web + "index.html")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(page), `id="rebalances"`) {
		t.Fatalf("index.html has no rebalances section (err %v)", err)
	}
	a.p.interrupt(t)
}

// waitRebalances polls the web API until ok accepts its list.
func waitRebalances(t *testing.T, web string, ok func([]rebalanceInfo) bool) []rebalanceInfo {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	var got clusterRebalances
	for {
		resp, err := http.Get(web + "api/cluster/rebalances")
		if err == nil {
			got = clusterRebalances{}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
		}
		if err == nil && got.Cluster == "ui" && len(got.Rebalances) > 0 && ok(got.Rebalances) {
			return got.Rebalances
		}
		if time.Now().After(deadline) {
			t.Fatalf("rebalances not as expected in time: %+v (err %v)", got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
