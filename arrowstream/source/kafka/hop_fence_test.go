package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// fenceFault fences the hop writer's transaction of the first upstream
// epoch with rows, once: "timeout" holds the transaction, just before it
// commits, until the broker has aborted it for its age (the writer's
// epoch bumped, as under load on a slow epoch); "zombie" initialises a
// second producer with the writer's transactional id there (an old
// incarnation racing a new one: the broker fences the older epoch), and
// "zombie-produce" does so before the transaction begins, so that the
// writer's first produce is refused (INVALID_PRODUCER_EPOCH); "slow"
// makes every attempt of the first epoch with a full record of rows
// spend longer reading than the writer's transaction timeout
// (slowEpoch, after its first record is encoded).
type fenceFault struct {
	t     *testing.T
	c     *kfake.Cluster
	mode  string
	fired atomic.Int64
	err   atomic.Value // error of the fault itself (not the epoch's)
	slow  atomic.Int64 // "slow": the epoch every attempt of which is slow (0: none yet)
}

// slowEpoch is how long each attempt of the "slow" epoch reads: longer
// than the transaction timeout of the test (2 s).
const slowEpoch = 2500 * time.Millisecond

func (f *fenceFault) BeforeTxnBegin(table, stage string, epoch int64) error {
	if f.mode != "zombie-produce" {
		return nil
	}
	return f.fire(table, stage, epoch)
}

func (f *fenceFault) BeforeTxnCommit(table, stage string, epoch int64) error {
	switch f.mode {
	case "zombie-produce":
		return nil
	case "slow":
		return nil
	}
	return f.fire(table, stage, epoch)
}

func (f *fenceFault) WhileReading(_, stage string, epoch int64) {
	if f.mode == "slow" && stage == "repartition" && (f.slow.CompareAndSwap(0, epoch) || f.slow.Load() == epoch) {
		time.Sleep(slowEpoch) // a slow epoch, not a wait for progress
		f.fired.Store(2)
	}
}

func (f *fenceFault) fire(table, stage string, epoch int64) error {
	if stage != "repartition" || epoch < 1 || !f.fired.CompareAndSwap(0, 1) {
		return nil
	}
	if err := f.fence(table); err != nil {
		f.err.Store(err)
	}
	f.fired.Store(2)
	return nil
}

func (f *fenceFault) AfterTxnCommit(string, string, int64) error { return nil }

// fence does the fault's mode to the open transaction of table's writer.
func (f *fenceFault) fence(table string) error {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.c.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	prefix := kafka.HopTopic("c1", table, 0) + "-w-"
	find := func(state string) (string, error) {
		ls, err := adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			return "", err
		}
		for _, l := range ls {
			if strings.HasPrefix(l.TxnID, prefix) && (state == "" || l.State == state) {
				return l.TxnID, nil
			}
		}
		return "", nil
	}
	ongoing := func() (string, error) { return find("Ongoing") }
	id, err := ongoing()
	if f.mode == "zombie-produce" {
		id, err = find("") // the writer's epoch 0 committed; nothing is open
	}
	if err != nil || id == "" {
		return fmt.Errorf("no transaction of the hop writer (%v)", err)
	}
	switch f.mode {
	case "timeout":
		// Wait (on the broker's progress, not a clock) until the broker
		// has aborted the transaction for its age.
		for {
			now, err := ongoing()
			if err != nil {
				return err
			}
			if now != id {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the broker never timed out transaction %s", id)
			case <-time.After(50 * time.Millisecond):
			}
		}
	case "zombie", "zombie-produce":
		z, err := kgo.NewClient(kgo.SeedBrokers(f.c.ListenAddrs()...), kgo.TransactionalID(id), kgo.TransactionTimeout(time.Minute))
		if err != nil {
			return err
		}
		defer z.Close()
		_, _, err = z.ProducerID(ctx) // InitProducerID: fences the writer's epoch
		return err
	}
	return fmt.Errorf("unknown fault mode %q", f.mode)
}

// TestClusterHopWriterFenced: the repartition hop's upstream writer has
// its transaction fenced by the broker just before it commits, either
// because the transaction outlived its timeout ("timeout": the broker
// aborts it and bumps the writer's epoch, what session 24 saw at load
// 30 on a single instance's large epoch) or because another producer
// initialised the writer's transactional id ("zombie", and
// "zombie-produce": before the transaction begins, so that its first
// produce is refused), and an epoch that reads for longer than the
// timeout at every attempt ("slow": its records are produced once it has
// read them all, so its transaction is short; when they were produced
// as they came, each attempt was fenced until the stage gave up). The
// query keeps
// running (the writer makes a new producer and the stage runs the epoch
// again from its checkpoint) and the counts are exactly the
// single-instance counts: nothing lost, nothing counted twice. Before,
// the upstream stage failed for good (`produce: INVALID_PRODUCER_EPOCH`
// or a fenced commit) and stopped the table's query.
func TestClusterHopWriterFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	for _, mode := range []string{"timeout", "zombie", "zombie-produce", "slow"} {
		t.Run(mode, func(t *testing.T) {
			c := newCluster(t, 12, "ev")
			bl := brokers(c)
			f := &fenceFault{t: t, c: c, mode: mode}
			// A short initial timeout so that the held transaction times
			// out soon; the writer doubles it after the fence.
			s, _ := newClusterSessionOpts(t, t.TempDir(), bl, kafka.ClusterOptions{Name: "c1", Address: "127.0.0.1:1001",
				SessionTimeout: 6 * time.Second, TxnTimeout: 2 * time.Second, Faults: f})
			defer s.close(t)
			q := startHopAggregation(t, s, bl)
			total := 0
			deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
			for f.fired.Load() < 2 {
				if time.Now().After(deadline) {
					t.Fatal("the hop writer's transaction never reached the fault")
				}
				n := 70
				if mode == "slow" && total == 0 {
					n = 60000 // a full record (hopRowsPerRecord) of rows in some hop partitions
				}
				produce(t, c, "ev", 12, "a", total, n)
				total += n
				time.Sleep(100 * time.Millisecond)
			}
			if err, _ := f.err.Load().(error); err != nil {
				t.Fatal(err)
			}
			produce(t, c, "ev", 12, "a", total, 700)
			total += 700
			want := strings.Join(wantAgg(total), " ")
			deadline = time.Now().Add(testutil.Scaled(2 * time.Minute))
			for {
				if err := q.Exception(); err != nil || !q.IsActive() {
					t.Fatalf("the query stopped after the writer was fenced: %v", err)
				}
				got := strings.Join(aggRows(t, s), " ")
				if got == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("counts %s, want %s", got, want)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// newClusterSessionOpts is newClusterSession with the cluster's options
// given (Brokers is set from brokerList).
func newClusterSessionOpts(t *testing.T, dir, brokerList string, opts kafka.ClusterOptions) (*testSession, *kafka.Cluster) {
	t.Helper()
	opts.Brokers = strings.Split(brokerList, ",")
	cl, err := kafka.NewCluster(opts)
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: opts.Name})
	kafka.InstallCluster(s, cl)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{Persist: true})
	return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir}, cl
}
