package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// statefulBuckets is the key count of the stateful acceptance table: key
// i % 7 of event e<i>, which is not the input partitioning (i % 12).
const statefulBuckets = 7

// countRows returns "u=n" rows of table counts through Flight SQL on the
// instance: its own (local) or the cluster's, gathered by it.
func (ci *clusterInstance) countRows(t *testing.T, local bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	if local {
		ctx = metadata.AppendToOutgoingContext(ctx, clusterLocalHeader, "1")
	}
	recs, err := readSQL(ctx, ci.addr, "SELECT u, n FROM counts")
	if err != nil {
		t.Fatalf("Flight SQL query on %s: %v", ci.addr, err)
	}
	var out []string
	for _, r := range recs {
		us, ns := r.Column(0).(*array.Int32), r.Column(1).(*array.Int64)
		for i := 0; i < int(r.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d=%d", us.Value(i), ns.Value(i)))
		}
		r.Release()
	}
	sort.Strings(out)
	return out
}

// TestClusterStatefulAcceptance: three `serve` instances of one cluster
// run a count per key that is not the input's partitioning (Complete
// mode) through the repartition hop, over a kfake broker in a child
// process. At the end each key is counted on exactly one instance, and
// the union, read locally from each instance or gathered by a Flight SQL
// query on any one, equals the single-instance result. The membership is
// stable during the run; TestClusterStatefulKillAcceptance moves state
// through a kill, a join and a restart.
func TestClusterStatefulAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster acceptance: four processes (-short)")
	}
	bin := buildBinary(t)
	ports := freePorts(t, 4)
	brokers := fmt.Sprintf("127.0.0.1:%d", ports[0])
	startKfake(t, ports[0])

	init := filepath.Join(t.TempDir(), "tables.sql")
	sqlText := fmt.Sprintf(`SET spark.sql.shuffle.partitions = 6;
CREATE TABLE events USING kafka OPTIONS ('kafka.bootstrap.servers' '%s', 'subscribe' 'events', 'startingOffsets' 'earliest');
CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete') AS
  SELECT u, count(*) AS n FROM (SELECT CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u FROM STREAM events) GROUP BY u;
`, brokers, statefulBuckets)
	if err := os.WriteFile(init, []byte(sqlText), 0o644); err != nil {
		t.Fatal(err)
	}
	insts := make([]*clusterInstance, 3)
	for i := range insts {
		insts[i] = &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[i+1])}
		insts[i].start(t, bin, brokers, init)
	}
	// Wait for both groups (the input's and the hop's) to be shared by
	// the three instances before the input flows.
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		recs, err := readSQL(ctx, insts[0].addr, "SELECT table_name, address, num_partitions FROM system.cluster_members")
		cancel()
		members := map[string]map[string]int64{}
		if err == nil {
			for _, r := range recs {
				for i := 0; i < int(r.NumRows()); i++ {
					tbl := r.Column(0).(*array.String).Value(i)
					if members[tbl] == nil {
						members[tbl] = map[string]int64{}
					}
					members[tbl][r.Column(1).(*array.String).Value(i)] += r.Column(2).(*array.Int64).Value(i)
				}
				r.Release()
			}
		}
		if stable(members["counts"], 3, clusterPartitions) && stable(members["counts-repartition-0"], 3, 6) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("groups never shared by the three instances: %v (err %v)", members, err)
		}
		time.Sleep(300 * time.Millisecond)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const total = 6000
	for c := 0; c < 6; c++ {
		produceEvents(t, cl, c*1000, 1000)
		time.Sleep(100 * time.Millisecond)
	}
	counts := map[int]int{}
	for i := 0; i < total; i++ {
		counts[i%statefulBuckets]++
	}
	var want []string
	for u, n := range counts {
		want = append(want, fmt.Sprintf("%d=%d", u, n))
	}
	sort.Strings(want)

	deadline = time.Now().Add(testutil.Scaled(3 * time.Minute))
	var union []string
	per := make([]int, len(insts))
	for {
		union = union[:0]
		for i, ci := range insts {
			rs := ci.countRows(t, true)
			per[i] = len(rs)
			union = append(union, rs...)
		}
		sort.Strings(union)
		if strings.Join(union, " ") == strings.Join(want, " ") || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("keys per instance: %v", per)
	if strings.Join(union, " ") != strings.Join(want, " ") {
		t.Fatalf("union of the instances' counts %v, want the single-instance result %v", union, want)
	}
	held := 0
	for _, n := range per {
		if n > 0 {
			held++
		}
	}
	if held < 2 {
		t.Errorf("keys per instance %v: want the keys spread over the instances", per)
	}
	for _, i := range []int{0, 2} {
		if got := insts[i].countRows(t, false); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("SELECT through instance %d: %v, want %v", i, got, want)
		}
	}
}

// stable reports whether a group has n members sharing parts partitions.
func stable(members map[string]int64, n int, parts int64) bool {
	total := int64(0)
	for _, p := range members {
		if p == 0 {
			return false
		}
		total += p
	}
	return len(members) == n && total == parts
}
