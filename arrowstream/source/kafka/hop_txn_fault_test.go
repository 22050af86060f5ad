package kafka_test

import (
	"errors"
	"fmt"
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

// txnFault fails the first epoch with rows of stage (epoch 0 reads the
// partitions' starts only) at point ("before": the transaction holds
// the epoch, not committed; "after": it committed and the epoch has not
// committed locally), once.
type txnFault struct {
	stage, point string
	fired        atomic.Int64
}

func (f *txnFault) fire(stage, point string, epoch int64) error {
	if stage == f.stage && point == f.point && epoch >= 1 && f.fired.CompareAndSwap(0, 1) {
		return fmt.Errorf("injected crash %s the %s transaction commits", point, stage)
	}
	return nil
}

func (f *txnFault) BeforeTxnCommit(_, stage string, epoch int64) error {
	return f.fire(stage, "before", epoch)
}

func (f *txnFault) AfterTxnCommit(_, stage string, epoch int64) error {
	return f.fire(stage, "after", epoch)
}

// TestClusterHopTransactionFaults: an instance running a count per key
// through the repartition hop fails an epoch on either side of a Kafka
// transaction's commit, on each stage: the upstream's (the hop's rows)
// and the downstream's (state changes and hop offsets): before the
// commit (the local state committed, Kafka aborts) and after it (Kafka
// committed, the local offset and commit logs did not). The instance is
// then restarted from its checkpoint; the counts are exactly the
// single-instance counts: no row lost, none counted twice.
func TestClusterHopTransactionFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	for _, stage := range []string{"repartition", "changelog"} {
		for _, point := range []string{"before", "after"} {
			t.Run(stage+"/"+point, func(t *testing.T) {
				c := newCluster(t, 12, "ev")
				bl := brokers(c)
				dir := t.TempDir()
				f := &txnFault{stage: stage, point: point}
				open := func(f kafka.TxnFaults) *testSession {
					cl, err := kafka.NewCluster(kafka.ClusterOptions{Name: "c1", Brokers: strings.Split(bl, ","), Address: "127.0.0.1:1001",
						SessionTimeout: 6 * time.Second, Faults: f})
					if err != nil {
						t.Fatal(err)
					}
					mem := poisonmem.New()
					s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true, Cluster: "c1"})
					kafka.InstallCluster(s, cl)
					sinks := memsink.NewCatalog()
					memsink.Install(s, sinks, memsink.Options{Persist: true})
					return &testSession{Session: s, mem: mem, sinks: sinks, dir: dir}
				}
				s := open(f)
				q := startHopAggregation(t, s, bl)
				// Events arrive in steps until an epoch after the first
				// one reaches the fault.
				total := 0
				deadline := time.Now().Add(testutil.Scaled(time.Minute))
				for f.fired.Load() == 0 {
					if time.Now().After(deadline) {
						t.Fatalf("the %s transaction never reached the fault", stage)
					}
					produce(t, c, "ev", 12, "a", total, 70)
					total += 70
					time.Sleep(100 * time.Millisecond)
				}
				// The crash: the query failed (or restarted in place);
				// the instance goes away and comes back.
				_ = q
				s.close(t)
				s2 := open(nil)
				defer s2.close(t)
				startHopAggregation(t, s2, bl)
				produce(t, c, "ev", 12, "a", total, 700)
				total += 700
				waitAgg(t, wantAgg(total), s2)
				if got := strings.Join(aggRows(t, s2), " "); got != strings.Join(wantAgg(total), " ") {
					t.Fatal(errors.New(got))
				}
			})
		}
	}
}
