package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// hopBuckets is the number of aggregation keys of the hop tests: the key
// u = i % hopBuckets of value <prefix><i> is not the input's
// partitioning (partition i % 12).
const hopBuckets = 7

// startHopAggregation starts the stateful table agg: a count per u over
// topic ev, which needs the repartition hop in cluster mode.
func startHopAggregation(t *testing.T, s *testSession, brokerList string) *arrowstream.StreamingQuery {
	t.Helper()
	s.SetConf(arrowstream.ConfShufflePartitions, "6")
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokerList, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.ReadStream("ks").
		Select(fmt.Sprintf("CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u", hopBuckets)).
		GroupBy("u").Count().
		WriteStream().Format("memory").OutputMode(arrowstream.Complete).QueryName("agg").
		Trigger(arrowstream.ProcessingTime(20 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// aggRows returns the rows u=count of the sessions' agg tables.
func aggRows(t *testing.T, sessions ...*testSession) []string {
	t.Helper()
	var out []string
	for _, s := range sessions {
		res, err := s.SQL(context.Background(), "SELECT u, count FROM agg")
		if err != nil {
			if strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "unknown") {
				continue
			}
			t.Fatal(err)
		}
		recs, err := vector.Drain(context.Background(), res.Op)
		res.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range vt.RowsOf(recs...) {
			out = append(out, fmt.Sprintf("%v=%v", r[0], r[1]))
		}
		for _, r := range recs {
			r.Release()
		}
	}
	sort.Strings(out)
	return out
}

// wantAgg is the single-instance result over values 0..n-1.
func wantAgg(n int) []string {
	counts := map[int]int{}
	for i := 0; i < n; i++ {
		counts[i%hopBuckets]++
	}
	var out []string
	for u, c := range counts {
		out = append(out, fmt.Sprintf("%d=%d", u, c))
	}
	sort.Strings(out)
	return out
}

// waitAgg waits until the union of the agg tables equals want.
func waitAgg(t *testing.T, want []string, sessions ...*testSession) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		got := aggRows(t, sessions...)
		if strings.Join(got, " ") == strings.Join(want, " ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("union of the agg tables: %v, want %v (each key once, with the single-instance count)\n%s", got, want, stallReport(sessions...))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGroup waits until table's group has n members, each with
// partitions, parts in all.
func waitGroup(t *testing.T, c *kafka.Cluster, table string, n, parts int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		ms, err := c.TableMembers(context.Background(), table)
		if err == nil {
			total, holders := 0, 0
			for _, m := range ms {
				total += len(m.Partitions)
				if len(m.Partitions) > 0 {
					holders++
				}
			}
			if len(ms) == n && holders == n && total == parts {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group of %s: members %+v, err %v; want %d members sharing %d partitions", table, ms, err, n, parts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterStatefulAggregation: two instances run an aggregation whose
// key is not the input's partitioning. Each reads its share of the 12
// input partitions, sends the rows through the hop topic hashed on the
// key, and aggregates the hop partitions assigned to it: the union of
// their tables equals the single-instance result, each key on one
// instance.
func TestClusterStatefulAggregation(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	b, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startHopAggregation(t, a, bl)
	startHopAggregation(t, b, bl)
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)

	produce(t, c, "ev", 12, "a", 0, 700)
	waitAgg(t, wantAgg(700), a, b)
	produce(t, c, "ev", 12, "a", 700, 700)
	waitAgg(t, wantAgg(1400), a, b)
	ra, rb := aggRows(t, a), aggRows(t, b)
	if len(ra) == 0 || len(rb) == 0 {
		t.Fatalf("instance tables %v and %v: want the keys shared by both instances", ra, rb)
	}
}

// startHopWindows starts wagg: counts per 10-second window and u, in
// Append mode with a watermark (delay 0) on ts = i/100 seconds, so that a
// window's row appears once the watermark passes its end.
func startHopWindows(t *testing.T, s *testSession, brokerList string) *arrowstream.StreamingQuery {
	t.Helper()
	s.SetConf(arrowstream.ConfShufflePartitions, "6")
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokerList, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.ReadStream("ks").
		Select(fmt.Sprintf("CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% %d AS INT) AS u", hopBuckets),
			"timestamp_seconds(CAST(substring(CAST(value AS STRING), 2) AS INT) / 100) AS ts").
		WithWatermark("ts", "0 seconds").
		GroupBy("window(ts, '10 seconds') AS w", "u").Agg("count(*) AS count").Select("u", "count").
		WriteStream().Format("memory").OutputMode(arrowstream.Append).QueryName("agg").
		Trigger(arrowstream.ProcessingTime(20 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestClusterWatermarkAcrossInstances: a windowed aggregation in Append
// mode across two instances. Events of the first window go to every key;
// then one event per input partition moves event time on, all of one key
// (so its rows reach the one instance that owns that key's hop
// partition). The other instance sees none of those rows, yet its
// watermark moves too: it is the minimum over the upstream writers'
// markers, which every hop partition carries. Both emit their keys'
// first windows, and the union equals the single-instance result.
func TestClusterWatermarkAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	b, _ := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startHopWindows(t, a, bl)
	startHopWindows(t, b, bl)
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)

	produce(t, c, "ev", 12, "a", 0, 700) // ts 0 .. 6.99 s: window [0, 10)
	// Nothing is emitted while the window is open.
	time.Sleep(testutil.Scaled(300 * time.Millisecond))
	if got := aggRows(t, a, b); len(got) != 0 {
		t.Fatalf("rows %v before the watermark passed the window", got)
	}
	// i = 2002 + 7k: key 0, ts 20.02 s and on, one per input partition.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for k := 0; k < 12; k++ {
		i := 2002 + 7*k
		v := []byte(fmt.Sprintf("f%d", i))
		recs = append(recs, &kgo.Record{Topic: "ev", Partition: int32(i % 12), Key: v, Value: v})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitAgg(t, wantAgg(700), a, b)
	ra, rb := aggRows(t, a), aggRows(t, b)
	if len(ra) == 0 || len(rb) == 0 {
		t.Fatalf("instance tables %v and %v: want both instances to close their keys' windows", ra, rb)
	}
}
