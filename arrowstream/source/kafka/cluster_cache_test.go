package kafka_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestClusterOffsetFetchesCached: with a stable assignment, epochs take
// the committed offsets from the member's cache (its own claims), not
// from an OffsetFetch each (three per epoch before); a second instance
// joining invalidates the cache, and the union stays exactly once.
func TestClusterOffsetFetchesCached(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	startPassthrough(t, a, bl)
	produce(t, c, "ev", 12, "a", 0, 12)
	waitUnion(t, 12, "a", a)
	waitMembers(t, ca, 1)
	before := kafka.OffsetFetchesOf(ca, "out")
	const rounds = 10
	for i := range rounds {
		prefix := fmt.Sprintf("r%d-", i)
		produce(t, c, "ev", 12, prefix, 0, 24)
		waitUnion(t, 24, prefix, a)
	}
	fetches := kafka.OffsetFetchesOf(ca, "out") - before
	t.Logf("%d OffsetFetch requests over %d rounds of input", fetches, rounds)
	if fetches > 2 {
		t.Fatalf("%d OffsetFetch requests over %d epochs with a stable assignment; want the cache to answer", fetches, rounds)
	}

	// A second member: the cache is dropped at the rebalance, both read
	// from the group's offsets, and every row is read once.
	b, cb := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startPassthrough(t, b, bl)
	waitMembers(t, cb, 2)
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for kafka.OffsetFetchesOf(ca, "out")-before == fetches {
		produce(t, c, "ev", 12, "x", 0, 12)
		if time.Now().After(deadline) {
			t.Fatal("no OffsetFetch after the rebalance: the cache outlived the assignment")
		}
		time.Sleep(100 * time.Millisecond)
	}
	produce(t, c, "ev", 12, "z", 0, 120)
	all := waitUnion(t, 120, "z", a, b)
	want := values("a", 0, 12)
	for i := range rounds {
		want = append(want, values(fmt.Sprintf("r%d-", i), 0, 24)...)
	}
	want = append(want, values("z", 0, 120)...)
	var got []string
	for _, v := range all {
		if v[0] != 'x' {
			got = append(got, v)
		}
	}
	checkExactlyOnce(t, got, want)
}

// TestClusterHopPlansFromCache: the hop's downstream member plans its
// epochs from its cache (the last stable fetch plus its own committed
// transactions), not from an OffsetFetch at every poll (every 10 ms, also
// while idle, before); the counts stay exactly the single-instance ones.
func TestClusterHopPlansFromCache(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	startHopAggregation(t, a, bl)
	waitGroup(t, ca, "agg", 1, 12)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "a", 0, 700)
	waitAgg(t, wantAgg(700), a)

	const hop = "agg-repartition-0"
	fetches, plans := kafka.OffsetFetchesOf(ca, hop), kafka.PlansOf(ca, hop)
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for kafka.PlansOf(ca, hop)-plans < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the downstream planned %d times in the deadline, want 20", kafka.PlansOf(ca, hop)-plans)
		}
		time.Sleep(20 * time.Millisecond)
	}
	df, dp := kafka.OffsetFetchesOf(ca, hop)-fetches, kafka.PlansOf(ca, hop)-plans
	t.Logf("idle downstream: %d OffsetFetch requests over %d plannings", df, dp)
	if df > 2 {
		t.Fatalf("%d OffsetFetch requests over %d idle plannings; want the cache to answer", df, dp)
	}
	produce(t, c, "ev", 12, "a", 700, 700)
	waitAgg(t, wantAgg(1400), a)
}

// TestClusterIdleHopPlansFromCacheAfterRebalance: a rebalance drops the
// hop downstream's planning cache; while no data comes the downstream
// runs no epoch (no Read to fill it again), and it fetched its committed
// offsets at every planning, about one OffsetFetch per listing on every
// idle instance (docs/cluster.md, k23g). Its planning's own fetch now
// fills the cache; new data after the idle spell is still counted on the
// two instances exactly once.
func TestClusterIdleHopPlansFromCacheAfterRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster rebalances take seconds (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1001")
	defer a.close(t)
	startHopAggregation(t, a, bl)
	waitGroup(t, ca, "agg-repartition-0", 1, 6)
	produce(t, c, "ev", 12, "a", 0, 120)
	waitAgg(t, wantAgg(120), a)

	// A second instance: both groups rebalance, which drops a's caches.
	b, cb := newClusterSession(t, t.TempDir(), bl, "c1", "127.0.0.1:1002")
	defer b.close(t)
	startHopAggregation(t, b, bl)
	const hop = "agg-repartition-0"
	waitGroup(t, ca, "agg", 2, 12)
	waitGroup(t, cb, hop, 2, 6)

	fetches, plans := kafka.OffsetFetchesOf(ca, hop), kafka.PlansOf(ca, hop)
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for kafka.PlansOf(ca, hop)-plans < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the downstream planned %d times in the deadline, want 20", kafka.PlansOf(ca, hop)-plans)
		}
		time.Sleep(20 * time.Millisecond)
	}
	df, dp := kafka.OffsetFetchesOf(ca, hop)-fetches, kafka.PlansOf(ca, hop)-plans
	t.Logf("idle downstream after a rebalance: %d OffsetFetch requests over %d plannings", df, dp)
	if df > 2 {
		t.Fatalf("%d OffsetFetch requests over %d idle plannings after a rebalance; want the planning's fetch cached", df, dp)
	}
	produce(t, c, "ev", 12, "a", 120, 600)
	waitAgg(t, wantAgg(720), a, b)
}

// TestClusterIdlePollsFollowListings: an idle cluster instance's query
// asks its source again when the source's next listing is due
// (stream.IdlePollSource), not every 10 ms with the cached answer in
// between (up to ten polls per listing before); new data after the idle
// spell is still read, exactly once. The source lists on its backoff
// (ListWhileIdle: without it an idle source waits on its watcher,
// TestClusterIdleSourceWatches).
func TestClusterIdlePollsFollowListings(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	bl := brokers(c)
	a, ca := newClusterSessionOpts(t, t.TempDir(), bl, kafka.ClusterOptions{Name: "c1", Address: "127.0.0.1:1001", SessionTimeout: 6 * time.Second, ListWhileIdle: true})
	defer a.close(t)
	if err := a.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": bl, "subscribe": "ev", "startingOffsets": "earliest"}); err != nil {
		t.Fatal(err)
	}
	q, err := a.ReadStream("ks").Select("CAST(value AS STRING) AS v").
		WriteStream().Format("memory").QueryName("out").Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	produce(t, c, "ev", 12, "a", 0, 120)
	waitUnion(t, 120, "a", a)
	listings, plans := kafka.ListingsOf(ca, "out"), kafka.PlansOf(ca, "out")
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for kafka.ListingsOf(ca, "out")-listings < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d listings in the deadline, want 20", kafka.ListingsOf(ca, "out")-listings)
		}
		time.Sleep(20 * time.Millisecond)
	}
	dl, dp := kafka.ListingsOf(ca, "out")-listings, kafka.PlansOf(ca, "out")-plans
	t.Logf("idle: %d plannings over %d listings", dp, dl)
	if dp > 2*dl+2 {
		t.Fatalf("idle: %d plannings over %d listings; want the query to wait for the next listing", dp, dl)
	}
	produce(t, c, "ev", 12, "b", 0, 120)
	checkExactlyOnce(t, waitUnion(t, 120, "b", a), append(values("a", 0, 120), values("b", 0, 120)...))
}

// TestClusterListingsReuseMetadata: an idle cluster source lists its
// partitions' ends several times a second; each listing asked the broker
// for the topic's metadata first (kadm's ListOffsets with a 10 ms
// metadata age), a second round trip per listing on every instance. Now
// the metadata is reused for up to a second; the data is still read
// exactly once. The source lists on its backoff (ListWhileIdle).
func TestClusterListingsReuseMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster groups take seconds to form (-short)")
	}
	c := newCluster(t, 12, "ev")
	var metadata atomic.Int64
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		metadata.Add(1)
		return nil, nil, false
	})
	bl := brokers(c)
	a, ca := newClusterSessionOpts(t, t.TempDir(), bl, kafka.ClusterOptions{Name: "c1", Address: "127.0.0.1:1001", SessionTimeout: 6 * time.Second, ListWhileIdle: true})
	defer a.close(t)
	startPassthrough(t, a, bl)
	produce(t, c, "ev", 12, "a", 0, 120)
	waitUnion(t, 120, "a", a)
	waitMembers(t, ca, 1)
	listings, before := kafka.ListingsOf(ca, "out"), metadata.Load()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for kafka.ListingsOf(ca, "out")-listings < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("%d listings in the deadline, want 30", kafka.ListingsOf(ca, "out")-listings)
		}
		time.Sleep(20 * time.Millisecond)
	}
	dl, dm := kafka.ListingsOf(ca, "out")-listings, metadata.Load()-before
	t.Logf("idle: %d Metadata requests over %d listings", dm, dl)
	// 30 listings take at least 2.6 s at the idle backoff (at most 100 ms
	// apart): with a one-second metadata age about one in ten asks for
	// metadata; every one did before. The bound leaves room for the other
	// clients' own refreshes.
	if dm > dl/2 {
		t.Fatalf("idle: %d Metadata requests over %d listings; want the listings to reuse the topic's metadata", dm, dl)
	}
	produce(t, c, "ev", 12, "b", 0, 120)
	checkExactlyOnce(t, waitUnion(t, 120, "b", a), append(values("a", 0, 120), values("b", 0, 120)...))
}
