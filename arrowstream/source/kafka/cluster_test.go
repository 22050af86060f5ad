package kafka_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// newClusterSession is a test session in cluster mode: its Kafka sources
// join the table's group in cluster name.
func newClusterSession(t *testing.T, dir, brokerList, name, addr string) (*testSession, *kafka.Cluster) {
	t.Helper()
	return newClusterSessionFaults(t, dir, brokerList, name, addr, nil)
}

// faults is SessionOptions.Faults.
type faults interface {
	BeforeSink(query string, epoch, inputRows int64) error
}

func newClusterSessionFaults(t *testing.T, dir, brokerList, name, addr string, f faults) (*testSession, *kafka.Cluster) {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.ClusterOptions{Name: name, Brokers: strings.Split(brokerList, ","), Address: addr, SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: name, Faults: f})
	kafka.InstallCluster(s, cl)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir}, cl
}

// startPassthrough starts the streaming table out over topic ev.
func startPassthrough(t *testing.T, s *testSession, brokerList string) *arrowstream.StreamingQuery {
	t.Helper()
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokerList, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").
		WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.ProcessingTime(20 * time.Millisecond)).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// waitUnion waits until the sessions' tables out hold n rows in all
// whose values start with prefix, and returns all their rows.
func waitUnion(t *testing.T, n int, prefix string, sessions ...*testSession) []string {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		var all []string
		k := 0
		for _, s := range sessions {
			for _, v := range s.stringColumn(t, "out", "v") {
				all = append(all, v)
				if strings.HasPrefix(v, prefix) {
					k++
				}
			}
		}
		if k >= n || time.Now().After(deadline) {
			return all
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterPassthroughExactlyOnce: two instances share a 12-partition
// topic through the table's group; one leaves, the other takes its
// partitions over, the first comes back from its checkpoint; the union of
// their tables holds every record once.
func TestClusterPassthroughExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	dirA, dirB := t.TempDir(), t.TempDir()
	a, ca := newClusterSession(t, dirA, bl, "c1", "127.0.0.1:1001")
	b, _ := newClusterSession(t, dirB, bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startPassthrough(t, a, bl)
	startPassthrough(t, b, bl)

	produce(t, c, "ev", 12, "a", 0, 600)
	checkExactlyOnce(t, waitUnion(t, 600, "a", a, b), values("a", 0, 600))

	// Both instances are in the table's group, each with its address
	// (described once the group is stable again).
	ms := waitMembers(t, ca, 2)
	if ms[0].Address == ms[1].Address || !strings.HasPrefix(ms[0].Address, "127.0.0.1:100") || !strings.HasPrefix(ms[1].Address, "127.0.0.1:100") {
		t.Fatalf("members %+v: want the addresses 127.0.0.1:1001 and :1002", ms)
	}

	// A leaves: B takes every partition over from the group's offsets.
	a.close(t)
	produce(t, c, "ev", 12, "b", 0, 600)
	got := waitUnion(t, 600, "b", b)
	bOnly := 0
	for _, v := range got {
		if strings.HasPrefix(v, "b") {
			bOnly++
		}
	}
	if bOnly != 600 {
		t.Fatalf("after A left, B holds %d of the 600 new records", bOnly)
	}

	// A comes back from its checkpoint (its table restored) and rejoins.
	a2, ca2 := newClusterSession(t, dirA, bl, "c1", "127.0.0.1:1001")
	defer a2.close(t)
	startPassthrough(t, a2, bl)
	waitMembers(t, ca2, 2)
	produce(t, c, "ev", 12, "c", 0, 600)
	want := append(append(values("a", 0, 600), values("b", 0, 600)...), values("c", 0, 600)...)
	checkExactlyOnce(t, waitUnion(t, 600, "c", a2, b), want)
}

// TestClusterRefusesUnpartitionedSources: in cluster mode a streaming
// table over a source that every instance would read whole is refused,
// with an error that says why.
func TestClusterRefusesUnpartitionedSources(t *testing.T) {
	s, _ := newClusterSession(t, t.TempDir(), "127.0.0.1:1", "c1", "")
	defer s.close(t)
	_, err := s.ReadStreamFormat("rate").Load().WriteStream().Format("memory").QueryName("r").Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cluster mode") || !strings.Contains(err.Error(), "rate") {
		t.Fatalf("rate source in cluster mode: err %v, want a cluster-mode refusal naming rate", err)
	}
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "ev"}); err != nil {
		t.Fatal(err)
	}
	// Stateful queries run across a repartition hop, but only one stateful
	// operator over one Kafka table, in a named query (hop_test.go).
	_, err = s.ReadStream("ks").DropDuplicates("key").GroupBy("key").Count().WriteStream().Format("memory").OutputMode(arrowstream.Complete).QueryName("agg").Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "more than one stateful operator") || !strings.Contains(err.Error(), "agg") {
		t.Fatalf("two stateful operators in cluster mode: err %v, want a refusal naming the query and the reason", err)
	}
	_, err = s.ReadStream("ks").GroupBy("key").Count().WriteStream().Format("memory").OutputMode(arrowstream.Complete).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "needs a name") {
		t.Fatalf("unnamed aggregation in cluster mode: err %v, want a refusal asking for a name", err)
	}
	// State moves between instances: a stateful table no longer needs
	// the acknowledgement that membership stays stable.
	q, err := s.ReadStream("ks").GroupBy("key").Count().WriteStream().Format("memory").OutputMode(arrowstream.Complete).QueryName("agg1").Start(context.Background())
	if err != nil && strings.Contains(err.Error(), arrowstream.ConfClusterStatefulStableMembership) {
		t.Fatalf("stateful table without %s: refused (%v), want it started", arrowstream.ConfClusterStatefulStableMembership, err)
	}
	if q != nil {
		q.Stop()
	}
	// Nor does one with an event-time watermark: the downstream
	// watermark waits until the hop's rows are consumed, wherever their
	// partitions move (TestClusterWatermarkWaitsForHopConsumption).
	q, err = s.ReadStream("ks").Select("CAST(value AS STRING) AS v", "timestamp AS ts").WithWatermark("ts", "0 seconds").
		GroupBy("window(ts, '10 seconds') AS w", "v").Agg("count(*) AS count").
		WriteStream().Format("memory").OutputMode(arrowstream.Append).QueryName("wagg").Start(context.Background())
	if err != nil && strings.Contains(err.Error(), arrowstream.ConfClusterStatefulStableMembership) {
		t.Fatalf("watermarked stateful table without %s: refused (%v), want it started", arrowstream.ConfClusterStatefulStableMembership, err)
	}
	if q != nil {
		q.Stop()
	}
	if err := s.RegisterSource("k", "kafka", nil, map[string]string{"kafka.bootstrap.servers": "127.0.0.1:1", "assign": `{"t":[0]}`}); err == nil || !strings.Contains(err.Error(), "subscribe") {
		t.Fatalf("assign in cluster mode: err %v, want a refusal naming subscribe", err)
	}
}

// waitMembers waits until the table out's group is stable with n members
// that each own partitions, 12 in all.
func waitMembers(t *testing.T, c *kafka.Cluster, n int) []kafka.Member {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		ms, err := c.TableMembers(context.Background(), "out")
		if err != nil {
			t.Fatal(err)
		}
		parts, holders := 0, 0
		for _, m := range ms {
			parts += len(m.Partitions)
			if len(m.Partitions) > 0 && m.Address != "" {
				holders++
			}
		}
		if len(ms) == n && holders == n && parts == 12 {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("members %+v: want %d members with their addresses sharing 12 partitions", ms, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// failBeforeSink fails every epoch with input before its sink commits: a
// crash after the epoch claimed its ranges.
type failBeforeSink struct{ fired atomic.Int64 }

func (f *failBeforeSink) BeforeSink(_ string, _, rows int64) error {
	if rows > 0 {
		f.fired.Add(1)
		return errors.New("injected crash before the sink commits")
	}
	return nil
}

// TestClusterReplayOfClaimedEpoch: an instance claims an epoch's ranges
// and crashes before its sink commits; another instance takes the
// partitions over after the claimed ranges, and the first, restarted,
// replays the epoch and reads exactly the ranges it claimed. A decision
// equal to the plan is not written (as after a crash between the claim
// and the file): the claim history in the group's offset metadata
// decides the same. It fails if the replay loses or repeats a range.
func TestClusterReplayOfClaimedEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	dirA, dirB := t.TempDir(), t.TempDir()
	f := &failBeforeSink{}
	a, _ := newClusterSessionFaults(t, dirA, bl, "c1", "127.0.0.1:1001", f)
	qa := startPassthrough(t, a, bl)
	produce(t, c, "ev", 12, "a", 0, 120)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for qa.IsActive() {
		if time.Now().After(deadline) {
			t.Fatal("the injected crash did not stop the query")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if f.fired.Load() == 0 {
		t.Fatalf("the query stopped without the injected crash: %v", qa.Exception())
	}
	a.close(t)
	// The epoch claimed every range it planned, so its decision
	// is not written (it equals the plan): the replay decides
	// from the claim history, as after a crash between the
	// claim and the file.
	claims := filepath.Join(dirA, "out", "sources", "0", "claims")
	if entries, err := os.ReadDir(claims); err == nil && len(entries) != 0 {
		t.Fatalf("claims directory %s: %d entries; want none (the decision equals the plan)", claims, len(entries))
	}

	// B takes every partition after A's claims: it must not read a*.
	b, cb := newClusterSession(t, dirB, bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startPassthrough(t, b, bl)
	waitMembers(t, cb, 1)
	produce(t, c, "ev", 12, "b", 0, 120)
	waitUnion(t, 120, "b", b)

	// A restarts and replays its epoch: the a* it claimed.
	a2, _ := newClusterSession(t, dirA, bl, "c1", "127.0.0.1:1001")
	defer a2.close(t)
	startPassthrough(t, a2, bl)
	produce(t, c, "ev", 12, "c", 0, 120)
	waitUnion(t, 120, "a", a2, b)
	want := append(append(values("a", 0, 120), values("b", 0, 120)...), values("c", 0, 120)...)
	checkExactlyOnce(t, waitUnion(t, 120, "c", a2, b), want)
	for _, v := range b.stringColumn(t, "out", "v") {
		if strings.HasPrefix(v, "a") {
			t.Fatalf("B read %s, which A had claimed", v)
		}
	}
}
