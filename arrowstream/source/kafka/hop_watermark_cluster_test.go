package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// fakeClock is the idleness clock of the watermark tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// failUpstream fails every epoch with rows of the repartition stage of
// query (after its source claimed the epoch's ranges, before the hop
// sink writes them) while armed: the instance holds a claimed range it
// never wrote, as one killed there does.
type failUpstream struct {
	query string
	armed atomic.Bool
	fired atomic.Int64
}

func (f *failUpstream) BeforeSink(query string, _, rows int64) error {
	if f.armed.Load() && rows > 0 && query == f.query+"-repartition-0" {
		f.fired.Add(1)
		return errors.New("injected crash before the repartition sink writes")
	}
	return nil
}

// newClockedClusterSession is newClusterSessionFaults with the idleness
// clock and timeout of the watermark.
func newClockedClusterSession(t *testing.T, dir, brokerList, addr string, f faults, clock *fakeClock) (*testSession, *kafka.Cluster) {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.ClusterOptions{Name: "c1", Brokers: strings.Split(brokerList, ","), Address: addr,
		SessionTimeout: 6 * time.Second, IdleTimeout: 10 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	opts := arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: "c1"}
	if f != nil {
		opts.Faults = f
	}
	s := arrowstream.NewSession(opts)
	kafka.InstallCluster(s, cl)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir, rows: newRowCounter(s)}, cl
}

// TestClusterWatermarkWaitsForAClaimedRange: instance B claims its input
// partitions' ranges of the first window's events and stops before
// writing them to the hop (as an instance killed there does; its
// writer then goes silent for longer than the idle timeout). A takes
// the partitions over and reads on, past the window's end. The window
// must not close without B's rows: the watermark waits for the range B
// claimed, and when B restarts from its checkpoint and writes it, the
// union of the windows equals the single-instance result. (Before input
// partitions were tracked, B's writer was idle, the window closed with
// A's rows only, and B's rows were dropped as late.)
func TestClusterWatermarkWaitsForAClaimedRange(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	dirB := t.TempDir()
	a, ca := newClockedClusterSession(t, t.TempDir(), bl, "127.0.0.1:1001", nil, clock)
	defer a.close(t)
	fb := &failUpstream{query: "agg"}
	b, _ := newClockedClusterSession(t, dirB, bl, "127.0.0.1:1002", fb, clock)
	startHopWindows(t, a, bl)
	startHopWindows(t, b, bl)
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)
	// A's share of the a events below: those of the input partitions it
	// owns (700 events over 12 partitions are 58 or 59 per partition).
	aShare := int64(0)
	for _, p := range ownedPartitions(t, ca, "agg") {
		for i := 0; i < 700; i++ {
			if int32(i%12) == p {
				aShare++
			}
		}
	}

	fb.armed.Store(true)
	produce(t, c, "ev", 12, "a", 0, 700) // ts 0 .. 6.99 s: window [0, 10)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for fb.fired.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("B's repartition stage never reached its sink")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.close(t)
	clock.Add(time.Minute) // B's writer is long silent

	// Event time moves past the window in every input partition; A owns
	// them all now.
	waitGroup(t, ca, "agg", 1, 12)
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
	// A reads the f events (and its own part of the a events) while B's
	// claimed range is missing: the window stays open.
	waitUpstreamRows(t, a, "agg-repartition-0", aShare+12) // A's a events and the f events
	waitHopDrained(t, bl, "c1-agg-repartition-0")
	quiet := time.Now().Add(testutil.Scaled(2 * time.Second))
	for time.Now().Before(quiet) {
		if got := aggRows(t, a); len(got) != 0 {
			t.Fatalf("window closed without B's claimed rows: %v (want none until B writes them)", got)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// B restarts from its checkpoint and writes the range it claimed.
	b2, _ := newClockedClusterSession(t, dirB, bl, "127.0.0.1:1002", nil, clock)
	defer b2.close(t)
	startHopWindows(t, b2, bl)
	waitAgg(t, wantAgg(700), a, b2)
}

// waitUpstreamRows waits until the session's query name has read n
// input rows (counted by the session's listener: RecentProgress keeps
// only the last 100 progress reports, fewer than a loaded run makes).
func waitUpstreamRows(t *testing.T, s *testSession, name string, n int64) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		got := s.rows.read(name)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %s read %d rows, want %d", name, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHopDrained waits until the hop's group has committed every
// partition of the hop topic up to its last stable offset: the
// downstream has processed every row written so far.
func waitHopDrained(t *testing.T, brokerList, hop string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokerList, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(10*time.Second))
		ends, err1 := adm.ListCommittedOffsets(ctx, hop)
		offs, err2 := adm.FetchOffsets(ctx, hop)
		cancel()
		drained := err1 == nil && err2 == nil
		if drained {
			ends.Each(func(o kadm.ListedOffset) {
				if o.Offset == 0 {
					return
				}
				c, ok := offs.Lookup(hop, o.Partition)
				drained = drained && ok && c.At >= o.Offset
			})
		}
		if drained {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hop %s was not drained: ends %v, committed %v (%v, %v)", hop, ends, offs, err1, err2)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownedPartitions is the partitions of table's input this instance owns.
func ownedPartitions(t *testing.T, c *kafka.Cluster, table string) []int32 {
	t.Helper()
	ms, err := c.TableMembers(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	for _, m := range ms {
		if !m.Self {
			continue
		}
		for _, tp := range m.Partitions {
			p, err := strconv.Atoi(tp[strings.LastIndexByte(tp, '-')+1:])
			if err != nil {
				t.Fatalf("member partition %q: %v", tp, err)
			}
			out = append(out, int32(p))
		}
	}
	if len(out) == 0 {
		t.Fatalf("this instance owns no partition of %s: %+v", table, ms)
	}
	return out
}
