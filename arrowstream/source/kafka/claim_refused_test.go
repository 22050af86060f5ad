package kafka_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
)

// claimRefusal sends the first claim of input rows in group with the
// generation before the member's, once: the coordinator refuses it
// (ILLEGAL_GENERATION) as it refuses a claim sent while a rebalance
// moves the group on, which under load is what happened in CI.
type claimRefusal struct {
	group string
	fired atomic.Int64
}

func (f *claimRefusal) ClaimGeneration(group string, generation int32, offsets int64) int32 {
	if group == f.group && offsets > 0 && f.fired.CompareAndSwap(0, 1) {
		return generation - 1
	}
	return generation
}

func (f *claimRefusal) BeforeTxnCommit(string, string, int64) error { return nil }
func (f *claimRefusal) AfterTxnCommit(string, string, int64) error  { return nil }

// TestClusterRefusedClaimIsPlannedAgain: an epoch whose claim the group
// coordinator refused reads nothing of the refused ranges, which go to
// the next plan. With no more input and no change of assignment, that
// plan is the refused epoch's ranges again; the engine took the equal
// offset for "no new data" and never ran it, so the rows waited until
// more input came (TestClusterStateMovesWithItsPartitions under load,
// session 26: half a batch missing for its whole 2-minute wait). One
// instance, all input produced before the query starts, the first claim
// of rows refused: every row must still arrive, exactly once, for a
// table without state and through the repartition hop.
func TestClusterRefusedClaimIsPlannedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	const n = 240
	t.Run("passthrough", func(t *testing.T) {
		c := newCluster(t, 12, "ev")
		bl := brokers(c)
		produce(t, c, "ev", 12, "a", 0, n)
		f := &claimRefusal{group: "c1-out"}
		s, _ := newClusterSessionOpts(t, t.TempDir(), bl, kafka.ClusterOptions{Name: "c1", Address: "127.0.0.1:1001",
			SessionTimeout: 6 * time.Second, Faults: f})
		defer s.close(t)
		startPassthrough(t, s, bl)
		got := waitUnion(t, n, "a", s)
		if f.fired.Load() != 1 {
			t.Fatal("no claim was refused: the test did not test anything")
		}
		checkExactlyOnce(t, got, values("a", 0, n))
	})
	t.Run("hop", func(t *testing.T) {
		c := newCluster(t, 12, "ev")
		bl := brokers(c)
		produce(t, c, "ev", 12, "a", 0, n)
		f := &claimRefusal{group: "c1-agg"}
		s, _ := newClusterSessionOpts(t, t.TempDir(), bl, kafka.ClusterOptions{Name: "c1", Address: "127.0.0.1:1001",
			SessionTimeout: 6 * time.Second, Faults: f})
		defer s.close(t)
		startHopAggregation(t, s, bl)
		waitAgg(t, wantAgg(n), s)
		if f.fired.Load() != 1 {
			t.Fatal("no claim was refused: the test did not test anything")
		}
	})
}
