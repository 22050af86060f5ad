package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// holdChangelog stops the downstream stage's epoch of an instance just
// before its changelog transaction begins, while armed, until released;
// it then fails the epoch (its hop offsets are not committed).
// The instance's hop partitions stay unconsumed in the meantime, as those
// of an instance that is killed, slow, or losing them in a rebalance.
type holdChangelog struct {
	armed   atomic.Bool
	once    sync.Once
	held    chan struct{} // closed when the first epoch is held
	release chan struct{}
}

func newHoldChangelog() *holdChangelog {
	return &holdChangelog{held: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdChangelog) BeforeTxnBegin(_, stage string, _ int64) error {
	if stage != "changelog" || !h.armed.Load() {
		return nil
	}
	h.once.Do(func() { close(h.held) })
	<-h.release
	return errors.New("injected: the changelog transaction of this epoch fails")
}

func (h *holdChangelog) BeforeTxnCommit(string, string, int64) error { return nil }

func (h *holdChangelog) AfterTxnCommit(string, string, int64) error { return nil }

func newTxnFaultSession(t *testing.T, brokerList, addr string, f kafka.TxnFaults) (*testSession, *kafka.Cluster) {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.ClusterOptions{Name: "c1", Brokers: strings.Split(brokerList, ","), Address: addr,
		SessionTimeout: 6 * time.Second, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	dir := t.TempDir()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: "c1"})
	kafka.InstallCluster(s, cl)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir, rows: newRowCounter(s)}, cl
}

// TestClusterWatermarkWaitsForHopConsumption: instance B's downstream
// stage holds its epoch's changelog transaction (its hop partitions'
// rows of the first window stay unconsumed), while both upstreams write
// every row of the window and then rows that move every input
// partition's event time past it. The watermark must not pass the window
// on A while rows of it sit unconsumed in B's hop partitions: no window
// closes. B's epoch then fails and B leaves; A takes B's hop partitions
// over, restores their state from the changelog and reads the rows B
// never committed; the windows then close with the single-instance
// counts. Before the watermark waited for the hop's consumption, A
// closed its windows at once and, after the takeover, dropped B's rows
// as late: the windows of B's keys lost them (the loss of
// TestClusterStatefulKillAcceptance).
func TestClusterWatermarkWaitsForHopConsumption(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newTxnFaultSession(t, bl, "127.0.0.1:1001", nil)
	defer a.close(t)
	hold := newHoldChangelog()
	b, _ := newTxnFaultSession(t, bl, "127.0.0.1:1002", hold)
	released := false
	defer func() {
		if !released {
			close(hold.release)
		}
	}()
	startHopWindows(t, a, bl)
	startHopWindows(t, b, bl)
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, ca, "agg-repartition-0", 2, 6)

	hold.armed.Store(true)
	produce(t, c, "ev", 12, "a", 0, 700) // ts 0 .. 6.99 s: window [0, 10)
	select {
	case <-hold.held:
	case <-time.After(testutil.Scaled(time.Minute)):
		t.Fatal("B's downstream never reached its changelog transaction")
	}
	// Event time moves past the window in every input partition.
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
	waitUpstreamRowsOf(t, "agg-repartition-0", 700+12, a, b)
	// Every row is in the hop and the marks say every input partition
	// passed the window; A's own hop partitions are read. The window
	// holds while B's are not consumed.
	quiet := time.Now().Add(testutil.Scaled(3 * time.Second))
	for time.Now().Before(quiet) {
		if got := aggRows(t, a); len(got) != 0 {
			t.Fatalf("window closed while rows of it were unconsumed in B's hop partitions: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// B's epoch fails (its transaction aborts) and B leaves: A owns every
	// hop partition and consumes B's rows over the changelog's state.
	hold.armed.Store(false)
	close(hold.release)
	released = true
	b.close(t)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	waitAgg(t, wantAgg(700), a)
}

// waitUpstreamRowsOf waits until the query name of the sessions has read
// n input rows in all.
func waitUpstreamRowsOf(t *testing.T, name string, n int64, sessions ...*testSession) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		var got int64
		for _, s := range sessions {
			got += s.rows.read(name)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %s read %d rows, want %d", name, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
