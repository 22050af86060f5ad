package kafka_test

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// waitPlans waits until the member of table out on c has planned n more
// epochs (idle or not) than from.
func waitPlans(t *testing.T, c *kafka.Cluster, from, n int64) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for kafka.PlansOf(c, "out")-from < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d plannings in the deadline, want %d", kafka.PlansOf(c, "out")-from, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitArmed waits until the watcher of table out on c is armed on
// exactly the partitions the member owns, and returns them.
func waitArmed(t *testing.T, c *kafka.Cluster) []int32 {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		_, _, armed, ownedNow, ok := kafka.WatchOwnedOf(c, "out")
		if !ok {
			t.Fatal("the cluster input source has no watcher")
		}
		owned := ownedNow["ev"]
		got := slices.Clone(armed["ev"])
		slices.Sort(got)
		slices.Sort(owned)
		if len(got) > 0 && slices.Equal(got, owned) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("watcher armed on %v, the member owns %v", got, owned)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterIdleSourceWatches: an idle cluster input source waits on its
// watcher's long-poll fetch instead of listing its partitions' ends at
// every idle backoff (every 100 ms before: one listing per planning or
// two); new data wakes it at once (the planning after the records, not
// the next relisting); a second instance's arrival moves the watcher to
// the partitions left; the rows are read exactly once; stopping the
// queries leaves no goroutine behind.
func TestClusterIdleSourceWatches(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	// The broker's side of a connection (kfake's clientConn read/write
	// loops) ends some time after the client closed it, later than
	// goleak's retries at CI's load: the broker is the fixture, so only
	// the client's goroutines are checked.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/twmb/franz-go/pkg/kfake.(*clientConn).read"),
		goleak.IgnoreTopFunction("github.com/twmb/franz-go/pkg/kfake.(*clientConn).write"))
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)                 // before goleak's check (deferred calls run last first)
	qa := startPassthrough(t, a, bl) // a trigger every 20 ms: every one asks the source
	produce(t, c, "ev", 12, "a", 0, 120)
	waitUnion(t, 120, "a", a)
	waitMembers(t, ca, 1)
	waitArmed(t, ca)

	// Idle: 100 plannings (2 s at the trigger) list at most a few times
	// (one per watchRelist, 5 s); without the watcher each listing served
	// at most five plannings (idle backoff 100 ms).
	listings, plans := kafka.ListingsOf(ca, "out"), kafka.PlansOf(ca, "out")
	waitPlans(t, ca, plans, 100)
	dl, dp := kafka.ListingsOf(ca, "out")-listings, kafka.PlansOf(ca, "out")-plans
	t.Logf("idle: %d listings over %d plannings", dl, dp)
	if dl > 2+dp/100 {
		t.Fatalf("idle: %d listings over %d plannings; want the source to wait on its watcher", dl, dp)
	}

	// New data wakes the source: the rows are read after a listing or two,
	// not at the next relisting (5 s, 250 plannings).
	_, wakes, _, _ := kafka.WatchOf(ca, "out")
	listings = kafka.ListingsOf(ca, "out")
	produce(t, c, "ev", 12, "b", 0, 24)
	waitUnion(t, 24, "b", a)
	_, woke, _, _ := kafka.WatchOf(ca, "out")
	t.Logf("new data: read after %d listings, %d wakes by data", kafka.ListingsOf(ca, "out")-listings, woke-wakes)
	if woke == wakes {
		t.Fatal("the rows were read without a wake by the watcher")
	}
	if n := kafka.ListingsOf(ca, "out") - listings; n > 4 {
		t.Fatalf("new data read after %d listings; want the watcher's wake to list it at once", n)
	}

	// A second instance: each watcher follows its member's partitions.
	b, cb := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	qb := startPassthrough(t, b, bl)
	waitMembers(t, cb, 2)
	pa, pb := waitArmed(t, ca), waitArmed(t, cb)
	t.Logf("armed after the rebalance: %v and %v", pa, pb)
	if len(pa)+len(pb) != 12 {
		t.Fatalf("watchers armed on %v and %v; want the 12 partitions split", pa, pb)
	}
	_, wa, _, _ := kafka.WatchOf(ca, "out")
	_, wb, _, _ := kafka.WatchOf(cb, "out")
	produce(t, c, "ev", 12, "c", 0, 120)
	all := waitUnion(t, 120, "c", a, b)
	_, wa2, _, _ := kafka.WatchOf(ca, "out")
	_, wb2, _, _ := kafka.WatchOf(cb, "out")
	if wa2 == wa || wb2 == wb {
		t.Fatalf("wakes by data after the rebalance: %d and %d; want both watchers to wake", wa2-wa, wb2-wb)
	}
	checkExactlyOnce(t, all, append(append(values("a", 0, 120), values("b", 0, 24)...), values("c", 0, 120)...))

	// Stopping while armed (a cancellation of the query's run): the
	// queries stop, the watchers' goroutines and clients with them
	// (goleak above).
	waitArmed(t, ca)
	waitArmed(t, cb)
	for _, q := range []interface{ Stop() error }{qa, qb} {
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
