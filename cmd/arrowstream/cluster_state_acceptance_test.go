package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// windowRows formats rows (u INT, ws TIMESTAMP, n BIGINT) as "u@ws=n".
func windowRows(recs []arrow.Record) []string {
	var out []string
	for _, r := range recs {
		us, ws, ns := r.Column(0).(*array.Int32), r.Column(1).(*array.Timestamp), r.Column(2).(*array.Int64)
		for i := 0; i < int(r.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d@%d=%d", us.Value(i), int64(ws.Value(i))/1_000_000, ns.Value(i)))
		}
	}
	sort.Strings(out)
	return out
}

// windowCounts reads table wcounts on the instance through Flight SQL:
// its own rows (local) or the cluster's, gathered by it.
func (ci *clusterInstance) windowCounts(t *testing.T, local bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	if local {
		ctx = metadata.AppendToOutgoingContext(ctx, clusterLocalHeader, "1")
	}
	recs, err := readSQL(ctx, ci.addr, "SELECT u, ws, n FROM wcounts")
	if err != nil {
		t.Fatalf("Flight SQL query on %s: %v", ci.addr, err)
	}
	defer releaseRecords(recs)
	return windowRows(recs)
}

// adbcRecords runs query through the ADBC Flight SQL driver (which reads
// every endpoint of the FlightInfo) and returns its rows formatted by f.
func adbcRecords(t *testing.T, addr, query string, f func([]arrow.Record) []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(map[string]string{adbc.OptionKeyURI: "grpc://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cn, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	st, err := cn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(query); err != nil {
		t.Fatal(err)
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		t.Fatalf("ADBC %s on %s: %v", query, addr, err)
	}
	defer rdr.Release()
	var recs []arrow.Record
	for rdr.Next() {
		r := rdr.Record()
		r.Retain()
		recs = append(recs, r)
	}
	defer releaseRecords(recs)
	if err := rdr.Err(); err != nil {
		t.Fatalf("ADBC read: %v", err)
	}
	return f(recs)
}

// wantWindows is the single-instance result of wcounts over e0..e(n-1)
// once the watermark passed every window they fall in: 10-second windows
// of ts = i/100 s, per u = i % 7.
func wantWindows(n int) []string {
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		counts[fmt.Sprintf("%d@%d", i%statefulBuckets, (i/1000)*10)]++
	}
	var out []string
	for k, c := range counts {
		out = append(out, fmt.Sprintf("%s=%d", k, c))
	}
	sort.Strings(out)
	return out
}

// diffRows describes how got differs from want (rows missing, extra).
func diffRows(got, want []string) string {
	have := map[string]int{}
	for _, g := range got {
		have[g]++
	}
	var missing, extra []string
	for _, w := range want {
		if have[w] > 0 {
			have[w]--
			continue
		}
		missing = append(missing, w)
	}
	for g, n := range have {
		for ; n > 0; n-- {
			extra = append(extra, g)
		}
	}
	sort.Strings(extra)
	return fmt.Sprintf("%d rows, want %d: %d missing %v, %d extra %v", len(got), len(want), len(missing), head(missing), len(extra), head(extra))
}

// TestClusterStatefulKillAcceptance: three `serve` instances of one
// cluster over a kfake broker in a child process run a passthrough table
// and a windowed count per key that is not the input's partitioning
// (Append mode, through the repartition hop, its state in the changelog
// topic). A producer writes keyed events over 12 partitions; one
// instance is killed with SIGKILL in the middle of the run, a fourth
// starts, the killed one restarts from its checkpoint. Hop partitions
// move with their state each time. The killed instance restarts without
// the --init file: its tables come back from its catalog with the
// settings they were created under (6 shuffle partitions). At the end
// the union of the instances' tables equals the single-instance result
// (0 lost, 0 duplicated) for both tables, read locally from every
// instance, through a Flight SQL query on one instance, and through the
// ADBC driver's read of the multi-endpoint FlightInfo.
func TestClusterStatefulKillAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster acceptance: five processes and rebalances take minutes (-short)")
	}
	bin := buildBinary(t)
	ports := freePorts(t, 5)
	brokers := fmt.Sprintf("127.0.0.1:%d", ports[0])
	startKfake(t, ports[0])

	init := filepath.Join(t.TempDir(), "tables.sql")
	sqlText := fmt.Sprintf(`SET spark.sql.shuffle.partitions = 6;
CREATE TABLE events USING kafka OPTIONS ('kafka.bootstrap.servers' '%s', 'subscribe' 'events', 'startingOffsets' 'earliest');
CREATE STREAMING TABLE passthrough AS SELECT CAST(value AS STRING) AS v FROM STREAM events;
CREATE STREAMING TABLE wcounts TBLPROPERTIES ('outputMode' = 'append') AS
  SELECT u, window.start AS ws, count(*) AS n
  FROM (SELECT CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u,
               timestamp_seconds(CAST(substring(CAST(value AS STRING), 2) AS INT) / 100) AS ts
        FROM STREAM events) WATERMARK ts DELAY OF INTERVAL 0 SECONDS
  GROUP BY window(ts, '10 seconds'), u;
`, brokers, statefulBuckets)
	if err := os.WriteFile(init, []byte(sqlText), 0o644); err != nil {
		t.Fatal(err)
	}
	insts := make([]*clusterInstance, 4)
	for i := range insts {
		insts[i] = &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[i+1])}
	}
	for _, ci := range insts[:3] {
		ci.start(t, bin, brokers, init)
	}
	// The input flows once the groups (the input's and the hop's) are
	// shared by the three instances: a writer the hop has not heard from
	// yet does not hold the downstream watermark back.
	waitStableGroups(t, insts[0].addr, map[string]int64{"wcounts": clusterPartitions, "wcounts-repartition-0": 6}, 3)

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	const chunks, perChunk = 24, 500
	for c := 0; c < chunks; c++ {
		produceEvents(t, cl, c*perChunk, perChunk)
		switch c {
		case 8: // kill -9 in the middle of the run
			killed := time.Now()
			if err := insts[1].p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-insts[1].p.exited
			t.Logf("killed instance 1 (%s) after %d events", insts[1].addr, (c+1)*perChunk)
			c++
			produceEvents(t, cl, c*perChunk, perChunk)
			t.Logf("rebalance: the survivors processed every partition of the passthrough table %.1f s after the kill (session timeout 6 s)",
				waitChunk(t, []*clusterInstance{insts[0], insts[2]}, c*perChunk, perChunk).Sub(killed).Seconds())
		case 12:
			insts[3].start(t, bin, brokers, init)
			t.Logf("started instance 3 (%s) after %d events", insts[3].addr, (c+1)*perChunk)
		case 16: // the killed instance comes back from its checkpoint
			insts[1].start(t, bin, brokers, "")
			t.Logf("restarted instance 1 (%s) after %d events", insts[1].addr, (c+1)*perChunk)
		}
		time.Sleep(200 * time.Millisecond)
	}
	total := chunks * perChunk
	// Event time moves past every window of the run: one event per input
	// partition at ts 1000 s (their own window stays open).
	flush := make([]*kgo.Record, 0, clusterPartitions)
	for p := 0; p < clusterPartitions; p++ {
		i := 100_000 + p
		v := []byte("e" + strconv.Itoa(i))
		flush = append(flush, &kgo.Record{Topic: "events", Partition: int32(i % clusterPartitions), Key: v, Value: v})
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	if err := cl.ProduceSync(ctx, flush...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	passTotal := total + clusterPartitions
	want := wantWindows(total)

	deadline := time.Now().Add(testutil.Scaled(4 * time.Minute))
	var all, windows []string
	per, perW := make([]int, len(insts)), make([]int, len(insts))
	for {
		all, windows = all[:0], windows[:0]
		for i, ci := range insts {
			rs := ci.rows(t, "passthrough", true)
			ws := ci.windowCounts(t, true)
			per[i], perW[i] = len(rs), len(ws)
			all = append(all, rs...)
			windows = append(windows, ws...)
		}
		sort.Strings(windows)
		if (len(all) >= passTotal && strings.Join(windows, " ") == strings.Join(want, " ")) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("passthrough rows per instance: %v (union %d, produced %d); window rows per instance: %v (union %d, want %d)", per, len(all), passTotal, perW, len(windows), len(want))
	checkUnion(t, "union of the instances' passthrough rows", filterEvents(all, total), total)
	if strings.Join(windows, " ") != strings.Join(want, " ") {
		t.Fatalf("union of the instances' window counts: %s", diffRows(windows, want))
	}
	held := 0
	for _, n := range perW {
		if n > 0 {
			held++
		}
	}
	if held < 2 {
		t.Errorf("window rows per instance %v: want the keys spread over the instances", perW)
	}

	// One Flight SQL query on any instance gathers the others' rows.
	for _, i := range []int{0, 3} {
		if got := insts[i].windowCounts(t, false); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("SELECT of wcounts through instance %d: %s", i, diffRows(got, want))
		}
	}
	// The ADBC driver reads the multi-endpoint FlightInfo of a plain read
	// (one endpoint per instance, DoGet at each location).
	ctx0, cancel0 := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel0()
	recs0, endpoints, err := readSQLInfo(ctx0, insts[1].addr, "SELECT u, ws, n FROM wcounts")
	if err != nil {
		t.Fatal(err)
	}
	releaseRecords(recs0)
	if endpoints != len(insts) {
		t.Errorf("FlightInfo of SELECT u, ws, n FROM wcounts: %d endpoints, want %d (one per instance)", endpoints, len(insts))
	}
	if !adbcMultiEndpointReads(t) {
		return
	}
	if got := adbcRecords(t, insts[2].addr, "SELECT u, ws, n FROM wcounts", windowRows); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ADBC read of wcounts: %s", diffRows(got, want))
	}
	checkUnion(t, "ADBC read of passthrough", filterEvents(adbcRows(t, insts[2].addr, "SELECT * FROM passthrough"), total), total)
}

// filterEvents drops the flush events (e100000 and on) from vs.
func filterEvents(vs []string, total int) []string {
	out := vs[:0:0]
	for _, v := range vs {
		if i, err := strconv.Atoi(strings.TrimPrefix(v, "e")); err == nil && i >= total && i >= 100_000 {
			continue
		}
		out = append(out, v)
	}
	return out
}

// waitStableGroups waits until each table's group has n members sharing
// its partitions (system.cluster_members on the instance at addr).
func waitStableGroups(t *testing.T, addr string, tables map[string]int64, n int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		recs, err := readSQL(ctx, addr, "SELECT table_name, address, num_partitions FROM system.cluster_members")
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
		ok := true
		for tbl, parts := range tables {
			ok = ok && stable(members[tbl], n, parts)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("groups never shared by %d instances: %v (err %v)", n, members, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
